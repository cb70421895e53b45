"""The training bitext of the frozen-encoder workflows (``meaning-head``, ``absent``).

From a published corpus version (columns ``src``, ``tgt``, and ``src_lang`` / ``tgt_lang`` when the corpus has
them) or a Parquet / two-column TSV file; the default is the Bible en-es asset minus the verses the benchmark
pack tests on (:func:`~interlingua.evaluation.splits.bible_heldout_split`). The pairs used are a
deterministic sample (``data_seed``), so every training seed reuses the same cached embeddings.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import Field, model_validator

from interlingua.core.config import Config
from interlingua.core.names import LanguageCode, Location
from interlingua.core.errors import UserError


class BitextSource(Config):
    """Where the training pairs come from (one of ``corpus`` or ``file``; neither = the Bible asset)."""

    corpus: str | None = Field(None, description="published corpus NAME or NAME@VERSION in the state's corpus store")
    file: Location | None = Field(None, description="Parquet (columns src/tgt or the two language codes) or TSV src<TAB>tgt")
    src_lang: LanguageCode = Field("en", description="language of the src side (file or corpus without language columns)")
    tgt_lang: LanguageCode = Field("es", description="language of the tgt side")
    max_pairs: int | None = Field(8000, ge=1, description="use this many pairs (deterministic sample; null = all)")
    data_seed: int = Field(0, description="seed of the pair sample and the validation split")
    exclude_bible_heldout: bool | None = Field(
        None, description="drop the pairs the Bible held-out split tests on (by the table's id column); null: for "
                          "the default Bible source only; true: for any source (it needs an id column); false: never")

    @model_validator(mode="after")
    def _one_source(self):
        if self.corpus and self.file:
            raise ValueError("give bitext.corpus or bitext.file, not both")
        return self


@dataclass
class Bitext:
    """Aligned pairs: ``src[i]`` (language ``src_langs[i]``) translates ``tgt[i]`` (``tgt_langs[i]``)."""

    ids: list[str]
    src: list[str]
    tgt: list[str]
    src_langs: list[str]
    tgt_langs: list[str]
    origin: str
    rejected: dict[str, int]

    def __len__(self) -> int:
        return len(self.src)

    @property
    def languages(self) -> list[str]:
        return sorted(set(self.src_langs) | set(self.tgt_langs))

    def take(self, rows) -> "Bitext":
        rows = list(rows)
        pick = lambda values: [values[i] for i in rows]  # noqa: E731
        return Bitext(pick(self.ids), pick(self.src), pick(self.tgt), pick(self.src_langs), pick(self.tgt_langs),
                      self.origin, dict(self.rejected))


def load_bitext(source: BitextSource, state: Path) -> Bitext:
    """Read, clean (empty sides counted as rejects), check languages, sample. Errors name the input."""
    if source.corpus:
        table, origin = _from_corpus(source.corpus, state)
    elif source.file:
        table, origin = _from_file(source.file, source), source.file
    else:
        from interlingua.workflows.assets.build import bible_path

        path = bible_path(state / "assets")
        if not path.is_file():
            raise UserError(f"no bitext given and the Bible asset {path} is missing; run `interlingua assets bible` "
                            "or set bitext.file / bitext.corpus")
        table, origin = _from_file(str(path), source.model_copy(update={"src_lang": "en", "tgt_lang": "es"})), str(path)
    n = len(table["src"])
    ids = [str(i) for i in table.get("id") or range(n)]
    src_langs = list(table.get("src_lang") or [source.src_lang] * n)
    tgt_langs = list(table.get("tgt_lang") or [source.tgt_lang] * n)
    rejected: dict[str, int] = {}
    keep = []
    exclude = source.exclude_bible_heldout
    if exclude is None:
        exclude = not source.corpus and not source.file
    if exclude and table.get("id") is None:
        raise UserError(f"{origin}: bitext.exclude_bible_heldout is true but the table has no id column to find the "
                        "held-out verses by; add an id column or set bitext.exclude_bible_heldout=false")
    heldout = _bible_heldout(ids) if exclude else np.zeros(n, bool)
    for i in range(n):
        if heldout[i]:
            rejected["bible_heldout"] = rejected.get("bible_heldout", 0) + 1
        elif not (table["src"][i] or "").strip() or not (table["tgt"][i] or "").strip():
            rejected["empty_side"] = rejected.get("empty_side", 0) + 1
        else:
            keep.append(i)
    same = [i for i in keep if src_langs[i] == tgt_langs[i]]
    if same:
        raise UserError(f"{origin}: {len(same)} pairs have both sides in the same language "
                        f"({src_langs[same[0]]!r}, e.g. row {ids[same[0]]}); the methods learn across two languages")
    bitext = Bitext(ids, list(table["src"]), list(table["tgt"]), src_langs, tgt_langs, origin, rejected).take(keep)
    if source.max_pairs and len(bitext) > source.max_pairs:
        rows = np.random.default_rng(source.data_seed).permutation(len(bitext))[:source.max_pairs]
        bitext = bitext.take(sorted(rows.tolist()))
    if len(bitext) == 0:
        raise UserError(f"{origin}: no usable pairs (rejected: {rejected})")
    return bitext


def check_language_sizes(sentence_langs: list[str], languages: list[str], batch_size: int, origin: str,
                         when: str = "") -> None:
    """Every language of ``languages`` fills a batch: ``sentence_langs`` is the language of each sentence (both sides
    of every pair). The frozen-encoder workflows (meaning-head, absent) check it once the bitext is loaded, before
    anything is embedded or Ray starts, and again on the pairs kept."""
    counts = Counter(sentence_langs)
    small = [(lang, counts[lang]) for lang in languages if counts[lang] < batch_size]
    if small:
        largest = min(counts[lang] for lang in languages)
        hint = f"lower train.batch_size to at most {largest} or add pairs" if largest >= 2 else "add pairs"
        raise UserError(f"{origin}: language {small[0][0]!r} has {small[0][1]} sentences{when}, fewer than a batch "
                        f"(train.batch_size={batch_size}); {hint}")


def split_validation(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, validation rows): a seeded ``fraction`` of ``range(n)`` held out (at least one row each)."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"validation fraction must lie in (0, 1); got {fraction}")
    if n < 2:
        raise UserError(f"need at least 2 pairs to split off a validation set; got {n}")
    order = np.random.default_rng(seed).permutation(n)
    size = validation_size(n, fraction)
    return np.sort(order[size:]), np.sort(order[:size])


def validation_size(n: int, fraction: float) -> int:
    """How many of ``n`` pairs :func:`split_validation` holds out (``n`` of at least 2): the rest is the training split."""
    return min(max(1, int(round(n * fraction))), n - 1)


def _bible_heldout(ids: list[str]) -> np.ndarray:
    from interlingua.evaluation.splits import bible_heldout_split

    return bible_heldout_split(ids)


def _from_corpus(spec: str, state: Path) -> tuple[dict, str]:
    from interlingua.core.runtime import corpus_root
    from interlingua.operators.corpus.store import LATEST, CorpusStore

    name, _, version = spec.partition("@")
    store = CorpusStore(corpus_root(state))
    try:
        manifest = store.manifest(name, version or LATEST)
        table = store.read_table(name, manifest.version)
    except (FileNotFoundError, LookupError, ValueError) as err:  # LookupError: KeyError and CorpusLookupError
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        raise UserError(f"bitext.corpus {spec!r}: {message}") from err
    missing = {"src", "tgt"} - set(table.column_names)
    if missing:
        raise UserError(f"corpus {spec!r} lacks columns {sorted(missing)} (has {table.column_names})")
    columns = [c for c in ("id", "src", "tgt", "src_lang", "tgt_lang") if c in table.column_names]
    return table.select(columns).to_pydict(), f"{manifest.name}@{manifest.version}"


def _from_file(path: str, source: BitextSource) -> dict:
    import fsspec

    try:
        if path.endswith(".parquet"):
            from interlingua.core.parquet_read import read_parquet

            with fsspec.open(path, "rb") as handle:
                table = read_parquet(handle).to_pydict()
            src_col = "src" if "src" in table else source.src_lang
            tgt_col = "tgt" if "tgt" in table else source.tgt_lang
            if src_col not in table or tgt_col not in table:
                raise UserError(f"{path}: needs columns src/tgt or {source.src_lang}/{source.tgt_lang}; has {sorted(table)}")
            out = {"src": table[src_col], "tgt": table[tgt_col]}
            out.update({c: table[c] for c in ("id", "src_lang", "tgt_lang") if c in table})
            return out
        with fsspec.open(path, "rt", encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        raise UserError(f"bitext file {path!r} does not exist") from None
    rows = [line.split("\t") for line in lines if line.strip()]
    bad = [i for i, r in enumerate(rows) if len(r) != 2]
    if bad:
        raise UserError(f"{path}: line {bad[0] + 1} has {len(rows[bad[0]])} tab-separated columns; expected 2 (src, tgt)")
    return {"src": [r[0] for r in rows], "tgt": [r[1] for r in rows]}
