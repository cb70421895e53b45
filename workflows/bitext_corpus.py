"""Workflow ``bitext-corpus``: raw bitext → hygiene → tokens → fast_align both ways → symmetrized links → word pairs.

The corpus of the explicit-alignment method (Wu & Dredze 2020) and of the meaning-embedding method
(Tiyajamorn et al. 2021), as a versioned corpus in the store. Steps:

1. **Read** (driver) the raw bitext from any fsspec URL: two plain-text files line for line
   (``source`` + ``target``), a two-column TSV, or Parquet with two named columns. Two text files
   with different line counts are an error naming both counts and the first file; a line that is
   not valid UTF-8 is rejected with its byte offset (``read`` / ``invalid_utf8``); a TSV line without
   exactly two columns is rejected (``read`` / ``column_count``).
2. **Hygiene** (:class:`~interlingua.operators.bitext.hygiene.BitextHygiene`, one pass over the whole
   input so duplicates are found across shards): empty side, sample fraction, length ratio, duplicates.
   Sampled-out pairs are only counted; the others are rejects with their reason. With
   ``keep_empty: true`` a pair with an empty side skips the filters and is kept with an empty alignment.
3. **Tokenize** (:class:`~interlingua.operators.text.tokenize_operator.TokenizeOperator` on Ray
   actors; Moses, character segmentation for zh/ja). A side longer than ``max_tokens`` tokens is
   rejected (``tokenize`` / ``too_long``).
4. **Learn** fast_align's parameters once (both directions, ``-d -o -v``; ``learner``: our
   deterministic EM with its E-step on ``workers`` Ray actors, or systran-align's) on the accepted
   pairs or on the first ``learn_sample`` of them, and keep them in the version folder
   (``fast_align/``), so a resumed run aligns its remaining shards with the same parameters. With
   ``aligner: eflomal`` eflomal's priors are learned instead (``eflomal/``).
5. **Align** (:class:`~interlingua.operators.align.align_operator.FastAlignOperator` on ``workers``
   Ray actors): forward + reverse links (fast_align Viterbi, compiled; or eflomal, one seeded run per shard's
   pairs: :class:`~interlingua.operators.align.align_operator.AlignUnitsOperator`), symmetrized
   (``symmetrization``, default grow-diag-final-and), Pharaoh ``i-j`` strings.
6. **Word pairs** (:func:`~interlingua.operators.align.word_pairs.word_pairs`): links joining two
   identical words dropped, then the one-to-one links among the rest kept (Wu & Dredze's order), as
   word indices (``word_pairs``); with ``subword_tokenizer`` (a Hugging Face fast tokenizer, local
   folder or hub id) also as first-subword positions (``subword_pairs``).

Shards are planned over the raw input rows (``rows_per_shard``); each shard's rows, rejects and
counters (``input``, ``read.*``, ``hygiene.*``, ``tokenize.*``, ``links.*``, ``word_pairs.*``) are
written when the shard is aligned, so a rerun of the same config and inputs skips complete shards.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from interlingua.core.archives import DECOMPRESSION_ERRORS, TruncatedInputError, cut_short, open_compressed
from interlingua.core.config import Config
from interlingua.core.errors import UserError
from interlingua.core.names import LanguageCode, Location, SafeName
from interlingua.core.redact import redact

DESCRIPTION = "raw bitext -> hygiene -> Moses tokens -> fast_align (both ways, symmetrized) -> word pairs corpus"
COLUMNS = ("id", "src", "tgt", "src_lang", "tgt_lang", "src_tokens", "tgt_tokens",
           "forward", "reverse", "alignment", "word_pairs", "subword_pairs")
PARAMS_FOLDER = "fast_align"
#: Parameters folder in the version and the file whose presence marks it complete, per aligner.
PARAMS_LAYOUT = {"fast_align": ("fast_align", "fast_align_params.json"), "eflomal": ("eflomal", "eflomal_params.json")}
#: Config keys that do not change the corpus (left out of the version's identity; a refresh's too).
OPERATIONAL_KEYS = ("workers", "store_root", "in_process_rows")
#: Raised when the same config and inputs give other links, so such a build gets another version id (a refresh a new
#: line, a recipe stage another hash) and never resumes, adopts or refreshes a version the code before wrote. 2:
#: fast_align learned by the interlingua learner decodes the unpruned tables its ``fast_align/`` folder now keeps (the
#: links of fast_align's training run; before, the beam-pruned tables' links, as ``fast_align -f``'s). Counted only
#: where the links changed (:func:`stage_marks`): eflomal's and the systran learner's versions keep their ids.
LINKS_VERSION = 2


class BitextCorpusConfig(Config):
    """Options of the ``bitext-corpus`` workflow."""

    source: Location | None = Field(default=None, description="source text file, TSV or Parquet (fsspec URL); "
                               "default: the Bible en-es asset")
    target: Location | None = Field(default=None, description="target text file, line for line with source (format text)")
    format: Literal["auto", "text", "tsv", "parquet"] = "auto"
    src_column: str | None = Field(default=None, description="Parquet source column (default: src_lang if present, else 'src')")
    tgt_column: str | None = Field(default=None, description="Parquet target column (default: tgt_lang if present, else 'tgt')")
    id_column: str | None = Field(default=None, description="Parquet id column (default: 'id' if present, else the row number; a refresh's "
                                                            "inputs number theirs as '<input key>:<n>', unique across inputs)")
    src_lang: LanguageCode = "en"
    tgt_lang: LanguageCode = "es"
    max_pairs: int | None = Field(default=None, ge=1, description="read only the first N input rows")
    sample_fraction: float = Field(default=1.0, gt=0.0, le=1.0)
    seed: int = 0
    max_length_ratio: float = Field(default=9.0, ge=1.0)
    deduplicate: bool = True
    keep_empty: bool = Field(default=False, description="keep pairs with an empty side (empty alignment) instead of rejecting them")
    max_tokens: int = Field(default=256, ge=1, description="reject a pair with more tokens than this on a side")
    iterations: int = Field(default=5, ge=1, description="fast_align EM iterations")
    aligner: Literal["fast_align", "eflomal"] = Field(default="fast_align", description="word aligner: fast_align "
                                                      "(learned parameters) or eflomal (priors learned once, reused per shard)")
    learner: Literal["interlingua", "systran"] = Field(default="interlingua", description="fast_align learning: "
                                                       "interlingua (deterministic EM, E-step on `workers` Ray actors) or "
                                                       "systran (systran-align, multithreaded, not reproducible)")
    learn_sample: int | None = Field(default=None, ge=1, description="learn parameters on the first N accepted pairs (default: all)")
    symmetrization: Literal["intersect", "union", "grow-diag", "grow-diag-final", "grow-diag-final-and"] = "grow-diag-final-and"
    subword_tokenizer: Location | None = Field(default=None, description="HF fast tokenizer for first-subword positions "
                                               "(a folder, a hub id, or e5-small: the state's e5-small asset)")
    subword_max_length: int | None = Field(default=512, ge=1)
    rows_per_shard: int = Field(default=4096, ge=1)
    workers: int = Field(default=2, ge=1, description="tokenize / align Ray actors")
    in_process_rows: int = Field(default=5000, ge=0, description="tokenize and align up to this many pairs in this "
                                 "process instead of on Ray actors, whose start-up outlasts small work (0: always Ray)")
    allow_truncated_inputs: bool = Field(default=False, description="a truncated/corrupt compressed input publishes "
                                         "the rows read before the damage, the version marked partial (default: error)")
    corpus_name: SafeName = "bitext-corpus"
    store_root: str | None = None

    @model_validator(mode="after")
    def _eflomal_length_limit(self) -> BitextCorpusConfig:
        from interlingua.operators.align.eflomal_backend import MAX_TOKENS

        if self.aligner == "eflomal" and self.max_tokens > MAX_TOKENS:
            raise ValueError(f"max_tokens {self.max_tokens} is above eflomal's {MAX_TOKENS} tokens per sentence (it gives a "
                             f"longer one no link): set max_tokens to {MAX_TOKENS} or less with aligner eflomal")
        return self

    @model_validator(mode="after")
    def _two_columns(self) -> BitextCorpusConfig:
        if self.src_column is not None and self.src_column == self.tgt_column:
            raise ValueError(f"src_column and tgt_column are both {self.src_column!r}: each pair would be a sentence and "
                             "itself; name the target's column in tgt_column")
        return self

    @model_validator(mode="after")
    def _target_only_for_text(self) -> BitextCorpusConfig:
        if self.format == "text" and self.target is None:
            raise ValueError("format text needs target (the second file, line for line with source)")
        if self.format in ("tsv", "parquet") and self.target is not None:
            raise ValueError(f"format {self.format} reads both sides from source; remove target")
        return self


CONFIG = BitextCorpusConfig


# -- 1. reading --------------------------------------------------------------------------------


def resolve_format(config: BitextCorpusConfig, source: str) -> str:
    if config.format != "auto":
        return config.format
    if config.target is not None:
        return "text"
    name = source.lower().split("?")[0]
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith((".tsv", ".tsv.gz", ".tsv.bz2", ".tsv.xz", ".tsv.zst", ".tab")):
        return "tsv"
    raise UserError(f"cannot tell the format of {source}: set format (text with target, tsv or parquet)")


def default_source() -> str:
    from interlingua.workflows.assets.build import state_bible

    path = state_bible()
    if not path.exists():
        raise UserError(f"no source given and the Bible asset {path} is missing (run `interlingua assets bible`)")
    return str(path)


def read_bitext(config: BitextCorpusConfig, source: str, partial: list[dict] | None = None, *,
                numbered: str = "") -> list[dict[str, Any]]:
    """Raw rows ``{"id", "src", "tgt", "reject"}`` in input order (``reject`` None or a record); a row's id is its
    id column's value, else ``numbered`` + its row number (a prefix that tells the inputs of a corpus apart). A
    truncated compressed input (a TSV, or either file of a text pair) raises :class:`TruncatedInputError`, or with
    ``allow_truncated_inputs`` ends the rows there and is appended to ``partial`` (``input_url``, ``reason``,
    ``offset``)."""
    fmt = resolve_format(config, source)
    if fmt == "parquet":
        return _read_parquet(config, source, numbered)
    try:
        return _read_text(source, config.target, config.max_pairs, numbered) if fmt == "text" \
            else _read_tsv(source, config.max_pairs, numbered)
    except TruncatedInputError as err:
        if not config.allow_truncated_inputs:
            raise
        if partial is not None:
            partial.append({"input_url": redact(err.url), "reason": err.detail, "offset": err.offset})
        return err.rows


def read_rows(config: BitextCorpusConfig, source: str, partial: list[dict] | None = None, *,
              numbered: str = "") -> list[dict[str, Any]]:
    """:func:`read_bitext`, refusing a source with no rows (nothing to build: a version holds at least one shard);
    a source whose every row is rejected is built, its rows as rejects."""
    rows = read_bitext(config, source, partial, numbered=numbered)
    if not rows:
        raise UserError(f"{redact(source)} holds no bitext rows: nothing to build (hint: check the file)")
    return rows


def _read_text(source: str, target: str, limit: int | None, numbered: str = "") -> list[dict[str, Any]]:
    from interlingua.operators.bitext.parallel_lines import LineCountMismatch, read_parallel_lines

    rows = []
    try:
        for pair in read_parallel_lines(source, target):
            if limit is not None and len(rows) >= limit:
                break
            rows.append({"id": f"{numbered}{pair.number}", "src": pair.src, "tgt": pair.tgt, "reject": pair.reject})
    except TruncatedInputError as err:
        err.rows = rows  # the pairs before the damage, for allow_truncated_inputs
        raise
    except FileNotFoundError as err:
        raise UserError(f"cannot read input: {err}") from err
    except LineCountMismatch as err:
        raise UserError(str(err)) from err
    return rows


def _read_tsv(source: str, limit: int | None, numbered: str = "") -> list[dict[str, Any]]:
    from interlingua.operators.bitext.parallel_lines import _decode

    rows, offset = [], 0
    try:
        handle_ctx = open_compressed(source, "rb")
        with handle_ctx as handle:
            lines = iter(handle.readline, b"")
            for number in itertools.count(1):
                try:
                    raw = next(lines)
                except StopIteration:
                    break
                except DECOMPRESSION_ERRORS as err:
                    truncated = cut_short(source, handle, err, number - 1)
                    truncated.rows = rows
                    raise truncated from None
                if limit is not None and len(rows) >= limit:
                    break
                text, reject = _decode(raw, offset, source, number, "line")
                offset += len(raw)
                src = tgt = ""
                if reject is None and text != "":
                    columns = text.split("\t")
                    if len(columns) == 2:
                        src, tgt = columns
                    else:
                        reject = {"line": number, "file": source, "reason": "column_count", "columns": len(columns),
                                  "detail": f"line {number} of {source} has {len(columns)} tab-separated columns, expected 2"}
                rows.append({"id": f"{numbered}{number}", "src": src, "tgt": tgt, "reject": reject})
    except FileNotFoundError as err:
        raise UserError(f"cannot read input: {err}") from err
    return rows


def _read_parquet(config: BitextCorpusConfig, source: str, numbered: str = "") -> list[dict[str, Any]]:
    import fsspec
    import pyarrow as pa
    import pyarrow.parquet as pq

    from interlingua.core.parquet_read import read_parquet

    try:
        with fsspec.open(source, "rb") as handle:
            names = pq.read_schema(handle).names
            src_col = config.src_column or (config.src_lang if config.src_lang in names else "src")
            tgt_col = config.tgt_column or (config.tgt_lang if config.tgt_lang in names else "tgt")
            id_col = config.id_column or ("id" if "id" in names else None)
            if src_col == tgt_col:  # src_lang == tgt_lang, both found as a column: each pair would be a sentence twice
                raise UserError(f"{source}: source and target would both be column {src_col!r} (src_lang and tgt_lang "
                                "are both that language): name the two columns with src_column and tgt_column")
            missing = [c for c in (src_col, tgt_col, id_col) if c is not None and c not in names]
            if missing:
                raise UserError(f"{source} has no column(s) {missing}; its columns are {names} "
                                "(set src_column / tgt_column / id_column)")
            handle.seek(0)
            table = read_parquet(handle, [c for c in (id_col, src_col, tgt_col) if c])
    except FileNotFoundError as err:
        raise UserError(f"cannot read input: {err}") from err
    for column in (src_col, tgt_col):  # text: strings, or bytes decoded below; anything else is a mistake
        kind = table.schema.field(column).type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind)
                or pa.types.is_large_binary(kind) or pa.types.is_null(kind)):
            raise UserError(f"{redact(source)}: column {column!r} holds {kind}, not text (hint: point src_column / "
                            "tgt_column at the string columns)")
    if config.max_pairs is not None:
        table = table.slice(0, config.max_pairs)
    data = table.to_pydict()
    ids = [str(i) for i in data[id_col]] if id_col else [f"{numbered}{k}" for k in range(1, table.num_rows + 1)]
    rows = []
    for number, (i, s, t) in enumerate(zip(ids, data[src_col], data[tgt_col]), 1):
        (s, s_reject), (t, t_reject) = _text(s, source, number, "src"), _text(t, source, number, "tgt")
        rows.append({"id": i, "src": s, "tgt": t, "reject": s_reject or t_reject})
    return rows


def _text(value, source: str, number: int, side: str) -> tuple[str, dict | None]:
    """A Parquet cell as text: a string as it is, null as "", bytes decoded as UTF-8 (a row whose bytes are not
    is rejected as ``invalid_utf8``, its record built as a text line's is)."""
    if value is None:
        return "", None
    if isinstance(value, str):
        return value, None
    from interlingua.operators.bitext.parallel_lines import invalid_utf8_reject

    try:
        return value.decode("utf-8"), None  # no byte order mark removed: a cell's bytes are all its text
    except UnicodeDecodeError as err:
        return "", invalid_utf8_reject(value, err, line=number, side=side, file=redact(source))


# -- 2. hygiene -------------------------------------------------------------------------------


def apply_hygiene(rows: list[dict[str, Any]], config: BitextCorpusConfig, seen_pairs=()) -> None:
    """Set each row's ``status``: ``read_reject``, ``kept``, ``empty_kept`` or a hygiene reason.
    ``seen_pairs`` ((src, tgt) already in the corpus) make equal pairs in ``rows`` duplicates."""
    from interlingua.operators.bitext.hygiene import BitextHygiene, HygieneSettings

    settings = HygieneSettings(sample_fraction=config.sample_fraction, seed=config.seed,
                               max_length_ratio=config.max_length_ratio, deduplicate=config.deduplicate)
    hygiene = BitextHygiene(settings, f"{config.src_lang}-{config.tgt_lang}")
    hygiene.mark_seen(seen_pairs)
    candidates = []
    for k, row in enumerate(rows):
        if row["reject"] is not None:
            row["status"] = "read_reject"
        elif config.keep_empty and (not row["src"].split() or not row["tgt"].split()):
            row["status"] = "empty_kept"
        else:
            row["status"] = "sampled_out"  # until the filter says otherwise
            candidates.append(k)
    current = [-1]

    def pairs():
        for k in candidates:
            current[0] = k
            yield rows[k]["src"], rows[k]["tgt"]

    for _ in hygiene.filter(pairs()):
        rows[current[0]]["status"] = "kept"
    for reject in hygiene.rejects:
        rows[candidates[reject["index"]]]["status"] = reject["reason"]


# -- 4. parameters ----------------------------------------------------------------------------


def ensure_parameters(store, writer, tokens: dict[int, tuple[list[str], list[str]]], order: list[int],
                      config: BitextCorpusConfig,
                      cleanup: contextlib.ExitStack) -> tuple[str | None, bool, str | None]:
    """``(directory the align actors read, learned now, parameters id)``.

    Uses the version's ``fast_align/`` (``eflomal/``) artifact when it has one (left by an earlier run of this
    version, adopted from another writer, or taken over from the parent version by a refresh);
    otherwise learns on the accepted pairs (first ``learn_sample``) and keeps them as the artifact.
    The id is the first 16 hex digits of the parameter file's SHA-256. ``(None, False, None)`` when
    no pair has two non-empty sides. A store the align actors cannot read (``memory://``) gets its parameters
    copied to a private folder under ``<state>/tmp``, removed when ``cleanup`` closes (the caller's build, errors
    included).
    """
    from interlingua.core.runtime import state_tempdir

    folder, params_file = PARAMS_LAYOUT[config.aligner]
    files = writer.artifact_files(folder)
    learned = False
    if not files:
        trainable = [tokens[k] for k in order if tokens[k][0] and tokens[k][1]]
        if config.learn_sample:
            trainable = trainable[: config.learn_sample]
        if not trainable:
            return None, False, None
        with state_tempdir(prefix=f"interlingua_{folder}_") as local:  # under <state>/tmp, not the system temp
            if config.aligner == "eflomal":
                from interlingua.operators.align.eflomal_backend import learn_eflomal_priors

                learn_eflomal_priors(trainable, local)
            else:
                from interlingua.operators.align.fast_align_training import FastAlignSettings, learn_fast_align

                learn_fast_align(trainable, local, FastAlignSettings(iterations=config.iterations), learner=config.learner,
                                 workers=config.workers if config.learner == "interlingua" else 1)
            with open(os.path.join(local, params_file), encoding="utf-8") as handle:
                meta = json.load(handle)
            meta["learn_pairs_requested"] = config.learn_sample
            with open(os.path.join(local, params_file), "w", encoding="utf-8") as handle:
                json.dump(meta, handle, indent=2)
            writer.add_artifact(folder, local)
        files, learned = writer.artifact_files(folder), True
    params_id = next(record.sha256[:16] for record, _ in files if record.path.endswith(params_file))
    directory = files[0][1].rsplit("/", 1)[0]
    fs = store.fs
    if "memory" in _protocols(fs):  # actors cannot see the driver's memory://
        local = cleanup.enter_context(state_tempdir(prefix=f"interlingua_{folder}_"))
        for _record, path in files:
            fs.get_file(path, os.path.join(local, path.rsplit("/", 1)[-1]))
        return local, learned, params_id
    return _url(fs, directory), learned, params_id


def published_parameters_dir(store, manifest, folder: str) -> str | None:
    """Where the published version ``manifest`` keeps its ``folder/`` parameters (the parent's folder when a refresh
    took them over), as a path on a local disk, else a URL; None when it has none."""
    records = [f for f in manifest.artifacts if f.path.split("/", 1)[0] == folder]
    if not records:
        return None
    return _url(store.fs, store._file_path(manifest.name, manifest.version, records[0]).rsplit("/", 1)[0])


def _url(fs, path: str) -> str:
    return path if "file" in _protocols(fs) else fs.unstrip_protocol(path)


def _protocols(fs) -> tuple[str, ...]:
    protocol = fs.protocol
    return tuple(protocol) if isinstance(protocol, (tuple, list)) else (protocol,)


# -- 6. word pairs ----------------------------------------------------------------------------


ASSET_TOKENIZER = "e5-small"  # subword_tokenizer naming the state's e5-small asset, wherever the state is


def subword_tokenizer_folder(name: str | None) -> str | None:
    """The folder or hub id ``subword_tokenizer`` names: :data:`ASSET_TOKENIZER` (with no such folder here) is the
    state's e5-small asset, built when missing, so a config or recipe need not spell the state's path."""
    if name != ASSET_TOKENIZER or Path(name).exists():
        return name
    from interlingua.core.runtime import assets_dir
    from interlingua.workflows.assets.build import e5_asset_uri

    return e5_asset_uri(assets_dir())


def stage_marks(data: dict[str, Any]) -> dict[str, int]:
    """``{"links_version": LINKS_VERSION}`` when ``data`` (a bitext-corpus config, dumped, or a recipe stage's, which
    may leave the defaults out) aligns with fast_align learned by the interlingua learner, else ``{}``: in the
    version's identity (:func:`identity_config`) and a recipe stage's hash
    (:func:`~interlingua.workflows.recipe_spec.stage_hash`)."""
    fields = BitextCorpusConfig.model_fields
    chosen = (data.get("aligner", fields["aligner"].default), data.get("learner", fields["learner"].default))
    return {"links_version": LINKS_VERSION} if chosen == ("fast_align", "interlingua") else {}


def identity_config(data: dict[str, Any], folder: str | None = None) -> dict[str, Any]:
    """What a version's (or a refresh line's) id is computed from: ``data`` (a bitext-corpus config, dumped) with its
    tokenizer's files (:func:`with_tokenizer_files`) and :func:`stage_marks`."""
    return {**with_tokenizer_files(data, folder), **stage_marks(data)}


def asset_model_files(data: dict[str, Any], folder: str | None = None) -> dict[str, str]:
    """``{"e5-small": files digest}`` when ``data`` (a bitext-corpus config, dumped) names the state's asset as its
    ``subword_tokenizer``, else ``{}``: the model files a name, not a path, stands for. A recipe's stage hash counts
    them too (a workflow module's ``asset_model_files``, :func:`~interlingua.workflows.recipe_spec.stage_hash`).
    ``folder``: the name's :func:`subword_tokenizer_folder`, when the caller resolved it already."""
    from interlingua.models.identity import files_digest

    name = data.get("subword_tokenizer")
    folder = subword_tokenizer_folder(name) if folder is None else folder
    return {name: files_digest(Path(folder))} if name == ASSET_TOKENIZER and folder != name else {}


def with_tokenizer_files(data: dict[str, Any], folder: str | None = None) -> dict[str, Any]:
    """``data`` (a bitext-corpus config, dumped) with the file digest of each local model folder it names
    (:func:`~interlingua.models.identity.with_model_files`) and of the asset it names (:func:`asset_model_files`,
    given ``folder``): a tokenizer rewritten in place gives another version, or a new refresh line."""
    from interlingua.models.identity import with_model_files

    out, assets = with_model_files(data), asset_model_files(data, folder)
    return {**out, "model_files": {**out.get("model_files", {}), **assets}} if assets else out


def _load_subword_tokenizer(name: str | None, folder: str | None = None):
    """The fast tokenizer ``subword_tokenizer`` names (a folder, a hub id, or :data:`ASSET_TOKENIZER`; ``folder``: its
    :func:`subword_tokenizer_folder`, when resolved already); a name that gives none is a :class:`UserError` of one
    line with a hint."""
    if name is None:
        return None
    name = subword_tokenizer_folder(name) if folder is None else folder
    from transformers import AutoTokenizer

    hint = f"(hint: a folder with a Hugging Face fast tokenizer, tokenizer.json, a hub id, or {ASSET_TOKENIZER})"
    path = Path(name).expanduser()
    if not path.exists() and (name.startswith((".", "/", "~")) or name.count("/") > 1):
        raise UserError(f"subword_tokenizer {name!r} does not exist {hint}")
    if path.is_dir() and not any((path / f).exists() for f in ("tokenizer.json", "tokenizer_config.json")):
        raise UserError(f"subword_tokenizer {name!r} holds no tokenizer (no tokenizer.json or "
                        f"tokenizer_config.json) {hint}")
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path) if path.exists() else name, use_fast=True)
    except (OSError, ValueError, KeyError) as err:
        first = " ".join(str(err).split())[:300]
        raise UserError(f"subword_tokenizer {name!r} could not be loaded: {first} {hint}") from None
    if not getattr(tokenizer, "is_fast", False):
        raise UserError(f"subword_tokenizer {name!r} has no fast (Rust) tokenizer; first-subword positions need one")
    return tokenizer


def corpus_schema():
    """The corpus columns: text as strings, ``src_tokens``/``tgt_tokens`` as lists of strings, links
    and word pairs (``forward``, ``reverse``, ``alignment``, ``word_pairs``, ``subword_pairs``) as lists
    of ``[i, j]`` (source index, target index). ``subword_pairs`` is null without ``subword_tokenizer``."""
    import pyarrow as pa

    links, tokens = pa.list_(pa.list_(pa.int32())), pa.list_(pa.string())
    return pa.schema([*(pa.field(c, pa.string()) for c in ("id", "src", "tgt", "src_lang", "tgt_lang")),
                      pa.field("src_tokens", tokens), pa.field("tgt_tokens", tokens),
                      *(pa.field(c, links) for c in ("forward", "reverse", "alignment", "word_pairs", "subword_pairs"))])


def _links(pairs) -> list[list[int]]:
    return [[int(i), int(j)] for i, j in pairs]


# -- the workflow -----------------------------------------------------------------------------


def _manifest_config(config: BitextCorpusConfig, source: str, tokenizer_folder: str | None = None) -> dict[str, Any]:
    """The version's config: the options that shape the rows, the source, and the file digest of a local model
    folder it names (``subword_tokenizer``, resolved to ``tokenizer_folder``), so a tokenizer rewritten in place gives
    another version."""
    return identity_config({**config.model_dump(exclude=set(OPERATIONAL_KEYS)), "source": source}, tokenizer_folder)


def _shard_counters(rows: list[dict[str, Any]]) -> Counter:
    counts: Counter = Counter({"input": len(rows)})
    for row in rows:
        status = row["status"]
        if status == "read_reject":
            counts[f"read.{row['reject']['reason']}"] += 1
            continue
        if status == "empty_kept":
            counts["empty_kept"] += 1
            continue
        counts["hygiene.input"] += 1
        counts[f"hygiene.{status}"] += 1
    return counts


def _shard_rejects(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rejects = []
    for row in rows:
        status = row["status"]
        if status == "read_reject":
            rejects.append({"operator": "read", "reason": row["reject"]["reason"], "row": {"id": row["id"], **row["reject"]}})
        elif status not in ("kept", "empty_kept", "sampled_out"):
            rejects.append({"operator": "bitext_hygiene", "reason": status,
                            "row": {"id": row["id"], "src": row["src"], "tgt": row["tgt"]}})
    return rejects


def _too_long(row: dict[str, Any], src_tokens: list[str], tgt_tokens: list[str], max_tokens: int) -> dict | None:
    for side, tokens in (("src", src_tokens), ("tgt", tgt_tokens)):
        if len(tokens) > max_tokens:
            return {"operator": "tokenize", "reason": "too_long",
                    "row": {"id": row["id"], "side": side, "tokens": len(tokens), "src": row["src"], "tgt": row["tgt"],
                            "detail": f"{side} of pair {row['id']} has {len(tokens)} tokens, more than max_tokens {max_tokens}"}}
    return None


def _tokenize(rows: list[dict[str, Any]], indices: list[int], config: BitextCorpusConfig):
    from interlingua.operators.runner import map_rows
    from interlingua.operators.text.tokenize_operator import TokenizeOperator

    items = [{"k": k, "src": rows[k]["src"], "tgt": rows[k]["tgt"]} for k in indices]
    batches = map_rows(items, TokenizeOperator, {"columns": {"src": config.src_lang, "tgt": config.tgt_lang}},
                       in_process_rows=config.in_process_rows, concurrency=config.workers)
    tokens: dict[int, tuple[list[str], list[str]]] = {}
    for batch in batches:
        for k, s, t in zip(batch["k"], batch["src_tokens"], batch["tgt_tokens"]):
            tokens[int(k)] = (str(s).split(), str(t).split())
    return tokens


def input_urls(config: BitextCorpusConfig) -> list[str]:
    """The files the build reads (the source, and the target of a text pair): their fingerprints enter the version
    id and a recipe stage's hash, so a file rewritten in place is built again."""
    return [config.source or default_source()] + ([config.target] if config.target else [])


def input_preflight(config: BitextCorpusConfig) -> None:
    """The source and target files on this machine the config names (not the Bible asset, which a recipe's earlier
    stage may build): found and not empty, before a recipe starts."""
    from interlingua.core.inputs import require_input_files

    require_input_files([url for url in (config.source, config.target) if url], local_only=True)


def run(config: BitextCorpusConfig, *, address: str | None = None) -> dict[str, Any]:
    """Build (or resume) the corpus version; returns a summary with the manifest's counts."""
    from interlingua.core.inputs import require_input_files, require_writable
    from interlingua.core.runtime import corpus_root
    from interlingua.operators.corpus.input_fingerprints import build_fingerprints
    from interlingua.operators.corpus.shards import plan_shards
    from interlingua.operators.corpus.store import CorpusStore

    inputs = input_urls(config)
    source = inputs[0]
    # the user's mistakes, before Ray starts: missing or empty inputs, an unwritable store
    require_input_files(inputs)
    require_writable(config.store_root or corpus_root(), "corpus store")
    require_aligner_runnable(config)
    fingerprints = build_fingerprints(inputs)  # before reading: a file rewritten meanwhile is recorded as it was read
    partial: list[dict] = []
    rows = read_rows(config, source, partial)
    # resolved once (e5-small: the state's asset, built when missing): the version's digest and the build's tokenizer
    tokenizer_folder = subword_tokenizer_folder(config.subword_tokenizer)
    store = CorpusStore(config.store_root or corpus_root())
    # provenance without credentials: the manifest's config and inputs, and the rejects, are redacted
    writer = store.open_version(config.corpus_name, redact(_manifest_config(config, source, tokenizer_folder)),
                                redact(inputs), input_fingerprints=fingerprints)
    for damaged in partial:  # allow_truncated_inputs: what was read is published, the version marked partial
        if not writer.published:
            writer.mark_partial(**damaged)
    return build_version(config, store, writer, rows, plan_shards(len(rows), config.rows_per_shard), address=address,
                         tokenizer_folder=tokenizer_folder)


def require_aligner_runnable(config: BitextCorpusConfig) -> None:
    """With ``aligner: eflomal``, start its seeded binary once from this state folder before any input is read: a folder
    mounted ``noexec`` is one line. Called by the process that runs the build (its priors are learned there, on a
    cluster too, so it is no ``environment_preflight``), not by ``preflight``, which ``--show-config`` and ``submit``
    also run on a machine that may never run the work."""
    if config.aligner == "eflomal":
        from interlingua.operators.align.eflomal_backend import require_runnable

        require_runnable()


def build_version(config: BitextCorpusConfig, store, writer, rows: list[dict[str, Any]], shards: list, *,
                  shard_inputs: dict[str, str] | None = None, seen_pairs=(), reused_shards: list[str] = (),
                  inherited_parameters: bool = False, address: str | None = None,
                  tokenizer_folder: str | None = None) -> dict[str, Any]:
    """Hygiene, tokens, parameters, alignment and word pairs for the planned ``shards`` over ``rows``;
    writes the shards not complete yet and publishes ``writer``'s version. ``tokenizer_folder``: the
    ``subword_tokenizer``'s folder when the caller resolved it (:func:`subword_tokenizer_folder`), else resolved here.

    A refresh passes the input of each shard (``shard_inputs``), the pairs the version keeps from its
    parent (``seen_pairs``, for deduplication), the ids of the shards it reused, and whether the
    ``fast_align/`` parameters were taken over from the parent (each shard records the parameters'
    id and whether they were learned on it: ``fast_align``, ``fast_align.learned_on``).
    """
    from interlingua.core.runtime import init_ray
    from interlingua.operators.align.align_operator import AlignUnitsOperator, FastAlignOperator, pack_units
    from interlingua.operators.runner import map_rows

    summary: dict[str, Any] = {"corpus": config.corpus_name, "version": writer.version, "input_rows": len(rows),
                               "shards_total": len(shards) + len(reused_shards), "shards_reused": len(reused_shards),
                               "shards_resumed": 0, "parameters": None}
    shard_inputs = shard_inputs or {}
    with contextlib.ExitStack() as cleanup:  # a local copy of the parameters (non-local store), removed when done
        if not writer.published:
            # loaded by each build, not kept by name: a tokenizer rewritten in place is read again (a long-running
            # `interlingua schedule`), and a bad name fails before Ray starts or anything is aligned
            tokenizer = _load_subword_tokenizer(config.subword_tokenizer, tokenizer_folder)
            apply_hygiene(rows, config, seen_pairs)
            pending = [s for s in shards if not writer.is_complete(s.id)]
            summary["shards_resumed"] = len(shards) - len(pending)
            accepted = [k for k, r in enumerate(rows) if r["status"] in ("kept", "empty_kept")]
            pending_rows = {k for s in pending for k in range(s.start, s.stop)}
            params_present = bool(writer.artifact_files(PARAMS_LAYOUT[config.aligner][0]))
            to_tokenize = [k for k in accepted if k in pending_rows or not params_present]
            # Ray only when a step runs on it: more rows than in_process_rows, or parameters to learn (the EM's
            # E-step on `workers` actors). A small refresh (new pairs, inherited parameters) never starts Ray.
            learner_on_ray = config.aligner == "fast_align" and config.learner == "interlingua" and config.workers > 1
            if len(to_tokenize) > config.in_process_rows or (to_tokenize and not params_present and learner_on_ray):
                init_ray(address, num_cpus=None if address else max(config.workers, 2))
            tokens = _tokenize(rows, to_tokenize, config)
            too_long = {}
            for k in to_tokenize:
                reject = _too_long(rows[k], *tokens[k], config.max_tokens)
                if reject:
                    too_long[k] = reject
            alignable = [k for k in to_tokenize if k not in too_long]
            params_dir, learned, params_id = ensure_parameters(store, writer, tokens, alignable, config, cleanup)
            summary["parameters"] = {"learned_now": learned, "dir": params_dir, "id": params_id,
                                     "inherited": inherited_parameters}
            folder = PARAMS_LAYOUT[config.aligner][0]
            annotations = {} if params_id is None else {
                folder: params_id, f"{folder}.learned_on": "no" if inherited_parameters else "yes"}

            def write(shard) -> None:
                _write_shard(writer, shard, rows, tokens, too_long, aligned, config, tokenizer,
                             input=shard_inputs.get(shard.id), annotations=annotations)

            shard_of = {k: s for s in pending for k in range(s.start, s.stop)}
            to_align = [k for k in alignable if k in pending_rows]
            aligned: dict[int, tuple[str, str, str]] = {}
            if params_dir is not None and to_align:
                items = [{"k": k, "src_tokens": " ".join(tokens[k][0]), "tgt_tokens": " ".join(tokens[k][1])}
                         for k in to_align]
                in_process = len(items) <= config.in_process_rows
                if not in_process:
                    init_ray(address, num_cpus=None if address else max(config.workers, 2))
                operator, options = FastAlignOperator, {"parameters_dir": params_dir, "aligner": config.aligner,
                                                        "symmetrization": config.symmetrization}
                if config.aligner == "eflomal":  # a shard's pairs sampled together, whatever the workers
                    operator, items = AlignUnitsOperator, pack_units(items, lambda item: shard_of[item["k"]].id)
                batches = map_rows(items, operator, options, in_process_rows=len(items) if in_process else 0,
                                   concurrency=config.workers, batch_size=1024)
                remaining = Counter(shard_of[k].id for k in to_align)
                for batch in batches:
                    finished = set()
                    for k, f, r, a in zip(batch["k"], batch["forward"], batch["reverse"], batch["alignment"]):
                        aligned[int(k)] = (str(f), str(r), str(a))
                        shard_id = shard_of[int(k)].id
                        remaining[shard_id] -= 1
                        if remaining[shard_id] == 0:
                            finished.add(shard_id)
                    # write shards as soon as all their rows are aligned (a crash loses only unfinished shards)
                    for shard in pending:
                        if shard.id in finished:
                            write(shard)
                            for k in range(shard.start, shard.stop):
                                aligned.pop(k, None)
                                tokens.pop(k, None)
            for shard in pending:  # shards with nothing to align (all rejected / empty), or no parameters at all
                if not writer.is_complete(shard.id):
                    write(shard)
    manifest = writer.publish(expected_shards=[*reused_shards, *(s.id for s in shards)])
    if summary["parameters"] and summary["parameters"]["dir"]:  # not the staging folder publishing removed
        summary["parameters"]["dir"] = published_parameters_dir(store, manifest, PARAMS_LAYOUT[config.aligner][0])
    summary.update({"version": manifest.version, "rows": manifest.total_rows, "rejects": manifest.total_rejects,
                    "rejects_by_reason": manifest.rejects_by_reason, "counters": manifest.counters,
                    "lost_race": writer.lost_race})
    return summary


def _write_shard(writer, shard, rows, tokens, too_long, aligned, config: BitextCorpusConfig, tokenizer=None, *,
                 input: str | None = None, annotations: dict[str, str] | None = None) -> None:
    """Rows, rejects and counters of one planned shard (word pairs computed here, in the driver; first-subword
    positions with ``tokenizer``, the loaded ``subword_tokenizer``)."""
    from interlingua.operators.align.pharaoh import parse_pharaoh
    from interlingua.operators.align.word_pairs import WordPairStats, first_subword_positions, word_pairs

    part = rows[shard.start : shard.stop]
    counters = _shard_counters(part)
    rejects = _shard_rejects(part)
    columns: dict[str, list[Any]] = {c: [] for c in COLUMNS}
    word_stats, subword_stats = WordPairStats(), WordPairStats()
    for k in range(shard.start, shard.stop):
        row = rows[k]
        if row["status"] not in ("kept", "empty_kept"):
            continue
        if k in too_long:
            rejects.append(too_long[k])
            counters["tokenize.too_long"] += 1
            continue
        src_tokens, tgt_tokens = tokens[k]
        forward, reverse, alignment = aligned.get(k, ("", "", ""))
        links = parse_pharaoh(alignment)
        counters["links.forward"] += len(parse_pharaoh(forward))
        counters["links.reverse"] += len(parse_pharaoh(reverse))
        counters["links.symmetrized"] += len(links)
        pairs = word_pairs(src_tokens, tgt_tokens, links, list(range(len(src_tokens))), list(range(len(tgt_tokens))), word_stats)
        subword = None
        if tokenizer is not None:
            src_pos = first_subword_positions(tokenizer, src_tokens, config.subword_max_length)
            tgt_pos = first_subword_positions(tokenizer, tgt_tokens, config.subword_max_length)
            subword = _links(word_pairs(src_tokens, tgt_tokens, links, src_pos, tgt_pos, subword_stats))
        values = {"id": row["id"], "src": row["src"], "tgt": row["tgt"], "src_lang": config.src_lang,
                  "tgt_lang": config.tgt_lang, "src_tokens": list(src_tokens), "tgt_tokens": list(tgt_tokens),
                  "forward": _links(parse_pharaoh(forward)), "reverse": _links(parse_pharaoh(reverse)),
                  "alignment": _links(links), "word_pairs": _links(pairs), "subword_pairs": subword}
        for c in COLUMNS:
            columns[c].append(values[c])
    rows_written = len(columns["id"])
    counters.update({f"word_pairs.{k}": v for k, v in word_stats.as_dict().items()})
    if tokenizer is not None:
        counters.update({f"subword_pairs.{k}": v for k, v in subword_stats.as_dict().items()})
    import pyarrow as pa

    schema = corpus_schema()
    table = pa.table({c: pa.array(columns[c], type=schema.field(c).type) for c in COLUMNS}, schema=schema)
    counts = {k: int(v) for k, v in counters.items() if v}
    counts["rows"] = rows_written
    writer.write_shard(shard.id, table, redact(rejects) or None, counters=counts, input=input, annotations=annotations)
