"""Workflow ``hard-negatives``: a bitext corpus version -> the same rows with a mined hard-negative target (``neg``).

For each pair (x, y) the negative is the target-language text of another pair that a frozen encoder (default: the
e5-small asset) ranks highest for x, among the targets of the pairs with the same ``src_lang`` → ``tgt_lang``,
subject to two guards against false negatives (a translation of x that is not y):

- it is not y, nor the target of any pair whose source is x's text, texts compared by :func:`text_key` (NFC,
  whitespace collapsed and stripped, casefolded: "El gato " is "el gato"), nor a target whose vector is y's own;
- its cosine with x is below cos(x, y) − (1 − ``max_ratio``) × |cos(x, y)|: the positive-aware threshold of
  NV-Retriever's "TopK-PercPos" (Moreira et al. 2024, "NV-Retriever: Improving text embedding models with
  effective hard-negative mining", 95 % of the positive's score), written so that it holds for either sign. For
  a positive cos(x, y) it is ``max_ratio`` × cos(x, y) exactly as the paper's; for a negative one, where 95 % of
  the score would lie *above* it (0.95 × −0.10 = −0.095 would let a −0.097 candidate, closer to x than y is,
  through), the candidate must be as far below: (2 − ``max_ratio``) × cos(x, y) (−0.105). Every negative is
  therefore strictly less similar to x than y is, by at least (1 − ``max_ratio``) of the positive's magnitude.

Guo et al. 2018 ("Effective Parallel Corpus Mining using Bilingual Sentence Embeddings") train translation ranking
with such hard negatives; ``translation_ranking`` reads the column with ``hard_negatives: true``.

A pair with no candidate left is written aside as a reject with its reason (:data:`NO_OTHER_TARGET` when its group
has no other target at all, :data:`NONE_UNDER_RATIO` when none is under the threshold), and a pair whose embedding is
not finite likewise; nothing is dropped silently. The version's config
holds the source version, the encoder's content identity (:func:`~interlingua.models.identity.model_identity`, not
its path) and the settings, so the same inputs give the same version wherever the state folder is, and a model
rewritten in place gives a new one; the rows keep their source order, in the store's shards
(:func:`~interlingua.operators.corpus.shards.plan_shards`: ``shard-00000``, … of :data:`ROWS_PER_SHARD` rows, a size
the version's config records).
"""

from __future__ import annotations

import unicodedata
from typing import Any

import numpy as np
from pydantic import Field, model_validator

from interlingua.core.config import Config
from interlingua.core.names import Location, SafeName, split_corpus_ref

DESCRIPTION = "add a mined hard-negative target (column neg) to each pair of a bitext corpus version"
GROUP_COLUMNS = ("src_lang", "tgt_lang")
#: Source rows per shard of the version.
ROWS_PER_SHARD = 4096
NONE_UNDER_RATIO = "no candidate under max_ratio"
NO_OTHER_TARGET = "no other target in its language pair"


class HardNegativesConfig(Config):
    corpus: str = Field(min_length=1, description="the bitext corpus: NAME (its latest version) or NAME@VERSION")
    model: Location | None = Field(None, description="the frozen encoder that ranks the candidates; default: the e5-small "
                                                "asset")
    max_ratio: float = Field(0.95, gt=0, le=1, description="a candidate's cosine with the source must be below "
                                                           "the positive's minus (1 - max_ratio) x its magnitude: "
                                                           "max_ratio x a positive cosine (false-negative guard)")
    name: SafeName | None = Field(None, description="corpus name in the store; default: <corpus>-hn")
    state_dir: str | None = Field(None, description="default: $INTERLINGUA_HOME or ./.interlingua")

    @model_validator(mode="after")
    def _not_the_source_name(self) -> "HardNegativesConfig":
        source = split_corpus_ref(self.corpus)[0]
        if self.name is not None and self.name == source:
            raise ValueError(f"name {self.name!r} is the corpus it reads: the mined version would become {source}'s "
                             f"latest, and a reader of the bitext would get the negatives' version; leave name unset "
                             f"({default_name(self.corpus)}) or choose another")
        return self


CONFIG = HardNegativesConfig


def default_name(corpus: str) -> str:
    """The output corpus name when ``name`` is not given: ``<corpus name>-hn`` (``corpus`` a name or NAME@VERSION)."""
    return f"{split_corpus_ref(corpus)[0]}-hn"


def guard_threshold(positive, max_ratio: float):
    """The cosine a candidate must stay below (module docstring): ``max_ratio`` × ``positive`` for a positive (or
    zero) positive cosine, (2 − ``max_ratio``) × ``positive`` for a negative one — ``positive`` − (1 − ``max_ratio``)
    × |``positive``| either way."""
    return max_ratio * positive if positive >= 0 else (2 - max_ratio) * positive


def text_key(text: str) -> str:
    """What two texts share when they are one text to the guards: NFC, whitespace runs collapsed to one space and
    stripped, casefolded ("El  gato " and "el gato" are one candidate, and one is never the other's negative)."""
    return " ".join(unicodedata.normalize("NFC", text).split()).casefold()


def mine_hard_negatives(src: np.ndarray, tgt: np.ndarray, src_text: list[str], tgt_text: list[str],
                        max_ratio: float = 0.95, block_bytes: int = 256 << 20,
                        stats: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """For pairs i with unit source vectors ``src[i]`` and target vectors ``tgt[i]`` (one language pair): the index
    of pair i's hard negative (a pair whose target is the candidate) and its cosine, or -1 and NaN where no
    candidate passes the guards (see the module docstring). Candidates are the distinct target texts (by
    :func:`text_key`); ties go to the first pair in row order. ``stats``, when given, receives ``no_other_target``
    (the pairs with no candidate but their own texts), ``text_key`` (whether normalizing merged two texts) and
    ``same_vector`` (how many picks a candidate whose vector
    is the pair's own target's displaced: with ``max_ratio`` 1 the two cosines, computed apart, may differ by an ulp).

    The search is exact: every source against every candidate, in row blocks whose similarities take at most
    ``block_bytes``. Its cost grows with pairs × targets of a language pair (15,802 pairs in five language pairs: under
    a second); for millions of pairs, mine a sample or the corpus in parts."""
    n = len(src_text)
    src_keys, tgt_keys = [text_key(t) for t in src_text], [text_key(t) for t in tgt_text]
    first_of = {}
    for i, key in enumerate(tgt_keys):
        first_of.setdefault(key, i)
    candidates = np.array(sorted(first_of.values()), dtype=np.int64)  # one pair per distinct target, row order
    cand_vectors = tgt[candidates]
    positive = np.einsum("ij,ij->i", src, tgt)
    own = {}  # source text -> the candidate columns of all its targets
    column_of = {tgt_keys[c]: k for k, c in enumerate(candidates)}
    for i, key in enumerate(src_keys):
        own.setdefault(key, set()).add(column_of[tgt_keys[i]])
    index = np.full(n, -1, dtype=np.int64)
    score = np.full(n, np.nan, dtype=np.float32)
    lonely, same_vector = [], 0
    block = max(1, block_bytes // (4 * max(1, len(candidates))))
    for start in range(0, n, block):
        stop = min(n, start + block)
        sims = src[start:stop] @ cand_vectors.T
        for row in range(stop - start):
            i = start + row
            s = sims[row].copy()
            s[list(own[src_keys[i]])] = -np.inf
            if len(own[src_keys[i]]) == len(candidates):
                lonely.append(i)
            s[s >= guard_threshold(positive[i], max_ratio)] = -np.inf
            best = int(np.argmax(s))  # the first maximum: ties go to the earlier pair
            while np.isfinite(s[best]) and np.array_equal(cand_vectors[best], tgt[i]):  # y's own vector: not a negative
                s[best], same_vector = -np.inf, same_vector + 1
                best = int(np.argmax(s))
            if np.isfinite(s[best]):
                index[i], score[i] = candidates[best], s[best]
    if stats is not None:
        stats["no_other_target"] = lonely
        stats["same_vector"] = same_vector
        stats["text_key"] = len(set(src_text)) != len(set(src_keys)) or len(set(tgt_text)) != len(set(tgt_keys))
    return index, score


def run(config: HardNegativesConfig, *, address: str | None = None) -> dict[str, Any]:
    import pyarrow as pa

    from interlingua.core.errors import UserError
    from interlingua.core.progress import Stages
    from interlingua.core.redact import redact_url
    from interlingua.core.runtime import assets_dir, corpus_root, state_dir
    from interlingua.models.protocol import l2_normalize
    from interlingua.operators.corpus.shards import plan_shards
    from interlingua.operators.corpus.store import CorpusLookupError, CorpusStore
    from interlingua.workflows.assets.build import e5_asset_uri
    from interlingua.workflows.bitext_source import publish_shards
    from interlingua.workflows.frozen_embeddings import embed, finite_rows, frozen_encoder

    stages = Stages("hard-negatives")
    state = state_dir(config.state_dir)
    store = CorpusStore(corpus_root(state))
    name, version = split_corpus_ref(config.corpus)
    try:
        source = store.manifest(name, version or "latest")
    except (CorpusLookupError, ValueError) as err:
        raise UserError(f"corpus: {err}") from None
    needed = {"src", "tgt", *GROUP_COLUMNS}
    if not needed <= set(source.columns):
        raise UserError(f"corpus {source.name}@{source.version} lacks columns {sorted(needed - set(source.columns))} "
                        f"(it has {sorted(source.columns)}); hard-negatives needs a bitext corpus "
                        f"(src, tgt, src_lang, tgt_lang)")
    if "neg" in source.columns:
        raise UserError(f"corpus {source.name}@{source.version} already has a column 'neg'")
    model = config.model or e5_asset_uri(assets_dir(state))
    table = store.read_table(source.name, source.version)
    src_text, tgt_text = table.column("src").to_pylist(), table.column("tgt").to_pylist()
    with stages("embed"):
        encoder = frozen_encoder(model, state, address)
        print(f"  encoder {redact_url(model)} ({encoder.identity})")
        src = embed(encoder, src_text, label="sources")
        tgt = embed(encoder, tgt_text, label="targets")
    finite = finite_rows(src, tgt)
    neg_index = np.full(table.num_rows, -1, dtype=np.int64)
    neg_score = np.full(table.num_rows, np.nan, dtype=np.float32)
    groups: dict[tuple[str, str], list[int]] = {}
    for i, key in enumerate(zip(*(table.column(c).to_pylist() for c in GROUP_COLUMNS))):
        if finite[i]:
            groups.setdefault(key, []).append(i)
    lonely = np.zeros(table.num_rows, dtype=bool)
    rules = set()  # the guards added since versions were first mined that change this corpus's rows
    with stages("mine"):
        for (src_lang, tgt_lang), rows in sorted(groups.items()):
            rows_arr, stats = np.array(rows), {}
            texts = [src_text[i] for i in rows], [tgt_text[i] for i in rows]
            local, scores = mine_hard_negatives(l2_normalize(src[rows_arr], dtype=np.float32),
                                                l2_normalize(tgt[rows_arr], dtype=np.float32), *texts,
                                                config.max_ratio, stats=stats)
            found = local >= 0
            neg_index[rows_arr[found]] = rows_arr[local[found]]
            neg_score[rows_arr] = scores
            lonely[rows_arr[stats["no_other_target"]]] = True
            rules |= {rule for rule in ("text_key", "same_vector", "no_other_target") if stats[rule]}
            print(f"  {src_lang} -> {tgt_lang}: {int(found.sum())} of {len(rows)} pairs have a hard negative")
    reasons = np.where(~finite, "embedding not finite", np.where(
        neg_index >= 0, "", np.where(lonely, NO_OTHER_TARGET, NONE_UNDER_RATIO)))
    out_name = config.name or default_name(source.name)
    # a corpus these guards change gets a new version (its rows, or its rejects' reasons, differ from those mined
    # before them under the same settings); any other keeps its version id and bytes
    version_config = {"source": f"{source.name}@{source.version}", "model": encoder.identity,
                      "max_ratio": config.max_ratio, "rows_per_shard": ROWS_PER_SHARD,
                      **({"guards": sorted(rules)} if rules else {})}
    writer = store.open_version(out_name, version_config, [f"corpus:{source.name}@{source.version}"])
    # the store's plan and shard names; an empty source still has one (empty) shard: a version holds at least one
    shards = {shard.id: shard for shard in plan_shards(max(1, table.num_rows), ROWS_PER_SHARD)}

    def write(shard_id: str) -> None:
        rows = np.arange(shards[shard_id].start, min(shards[shard_id].stop, table.num_rows))
        kept = rows[reasons[rows] == ""]
        rejected = rows[reasons[rows] != ""]
        part = table.take(pa.array(kept)).append_column(
            "neg", pa.array([tgt_text[j] for j in neg_index[kept]], pa.string())).append_column(
            "neg_cosine", pa.array(neg_score[kept], pa.float32()))
        rejects = [{"operator": "hard-negatives", "reason": str(reasons[i]),
                    "row": {c: table.column(c)[int(i)].as_py() for c in table.column_names}} for i in rejected]
        writer.write_shard(shard_id, part, rejects=rejects or None,
                           counters={"pairs": len(rows), "with_negative": len(kept), "rejected": len(rejected)})

    published = publish_shards(writer, list(shards), write)
    print(f"hard-negatives: {published.name}@{published.version}: {published.total_rows} pairs with a negative, "
          f"{published.total_rejects} written aside (no other target, no candidate under max_ratio "
          f"{config.max_ratio}, or a non-finite embedding)")
    return {"corpus": f"{published.name}@{published.version}", "rows": published.total_rows,
            "rejects": published.total_rejects, "languages": store.languages(published.name, published.version),
            "seconds": stages.seconds}


