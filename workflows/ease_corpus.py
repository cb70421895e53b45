"""Workflow ``ease-corpus``: Wikipedia dumps (+ Wikidata) → the EASE training corpus (Nishikawa et al. 2022).

Stages (each resumable: a rerun with the same config skips finished work):

1. **Extract** (parallel, Ray Data, one row per dump shard; :class:`ExtractShards`): pages → sentences with
   links, redirects, page titles, reports, in ``<work_dir>/extract/<shard>/`` (skipped when ``_SUCCESS`` exists).
2. **Link** (per shard): targets resolved through each language's redirect table (collected from the dump's own
   redirect pages; chains ``A → B → C`` are followed to ``C``, up to 8 hops, cycles stop; see
   :mod:`interlingua.operators.wiki.titles`), mapped to entity ids (Wikidata JSON dump sitelinks, else
   ``page_props`` SQL dumps, else titles — recorded in the manifest config as ``entity_id_source``). Link count
   of an entity: every link occurrence to it (after redirect resolution and mapping) inside the extracted prose
   sentences — the sentences the corpus is made of, so not links in lists, tables, templates, or in sentences
   outside ``min_sentence_chars``..``max_sentence_chars``; a sentence linking it twice counts 2 — summed over
   all languages (with Wikidata or ``page_props`` ids an entity's links in every dump add up; titles as ids are
   per language). Entities linked strictly more than ``min_entity_links`` times (default 10: the paper's
   "entities with more than 10 hyperlinks", which counts hyperlinks, not sentences) are kept.
3. **Negatives** (per shard): ``negatives_per_pair`` (default 1) kept entities sharing a P31 type with the
   pair's entity (a random one of its types that has candidates), never the entity itself and never an entity
   linked anywhere on the pair's page (any article link of the raw page, normalized and redirect-resolved, plus
   the page's own entity); with no P31 source, any kept entity the pair's own language links (so with titles as
   ids an English pair never gets a ``dewiki:`` negative); seeded by ``seed`` and the pair's identity. Pairs
   with no candidate are dropped, counted (``pairs_dropped_<reason>``) and kept aside as rejects.
4. **Caps**: ``max_pairs_per_entity`` and ``max_pairs_per_language``, deterministic by ``seed``.
5. **Publish**: corpus ``<name>`` (lang, sentence, entity_id, hard_negative_ids, page_id, …; one store shard
   per dump shard; finished shards are skipped on resume) and ``<name>-entities`` (entity_id, link_count,
   types, vector). Vectors: ``entity_vectors`` (word2vec text or .npy + ids) if given; else Wikipedia2Vec
   trained on the dumps (``vector_method``: auto/wikipedia2vec); else gensim skip-gram over link contexts;
   the entities manifest's config says which (``vector_source``). Both trainings run on one process, seeded by
   ``seed``: the vectors depend on the dumps, ``vector_dim``, ``vector_epochs`` and ``seed``, never on ``workers``
   (multi-process Wikipedia2Vec and multi-threaded gensim give other vectors on every run).

The funnel (pages → sentences → pairs → kept) is returned and stored in the manifest counters.

Refused in one line, with nothing published: at load, a ``lang`` that is no Wikipedia language code; before Ray,
a dump of a format the reader does not take (bz2, gzip, xz and uncompressed XML are read, told by their magic
bytes; zstd, 7z, a Wikidata JSON or SQL file given as the dump are not) and a dump whose ``<siteinfo>`` names
another wiki than its ``lang`` (:mod:`interlingua.operators.wiki.dump_check`), and a Wikidata JSON whose first
8 MiB hold no entity (or, when that is all of it, no sitelink to a dump's language); after the extraction, a dump
that yields no page, a Wikidata JSON without a sitelink to a dump's language, and a build that keeps no pair (the
message names the funnel stage that emptied; :mod:`interlingua.operators.wiki.empty_build`). Wikidata lines that
are no entity are counted (``wikidata_lines_rejected[_<reason>]``) and kept in the rejects (operator ``wikidata``).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar, Literal

from interlingua.core.config import Config
from interlingua.core.names import Location, SafeName
from interlingua.core.archives import TruncatedInputError
from interlingua.core.redact import redact, redact_url
from interlingua.operators.corpus.input_fingerprints import build_fingerprints
from pydantic import Field, field_validator, model_validator

DESCRIPTION = "Wikipedia hyperlinks → Wikidata entities → hard negatives: the EASE corpus"


def _gensim_test_dump(name: str) -> str:
    import importlib.util

    spec = importlib.util.find_spec("gensim")
    root = Path(spec.origin).parent if spec and spec.origin else Path(".")
    return str(root / "test" / "test_data" / name)


class WikiDump(Config):
    """One language's ``pages-articles`` dump; ``index_url`` for a multistream dump's index."""

    KEY_SYNONYMS: ClassVar[dict[str, str]] = {"path": "url", "file": "url"}  # a local path is a url here too
    lang: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    url: str
    index_url: str | None = None
    page_props_url: str | None = None

    @field_validator("lang")
    @classmethod
    def _wikipedia_language(cls, lang: str) -> str:
        """One of the Wikipedia language codes (:data:`WIKIPEDIA_LANGUAGE_CODES`), with a did-you-mean hint."""
        from interlingua.core.config import closest
        from interlingua.operators.wiki.wikitext_markup import WIKIPEDIA_LANGUAGE_CODES

        if lang in WIKIPEDIA_LANGUAGE_CODES:
            return lang
        prefixes = [code for code in WIKIPEDIA_LANGUAGE_CODES if lang.startswith(code)]  # eng, en-gb -> en
        close = max(sorted(prefixes), key=len) if prefixes else closest(lang, sorted(WIKIPEDIA_LANGUAGE_CODES))
        raise ValueError(f"{lang!r} is not a Wikipedia language code ({f'did you mean {close!r}? ' if close else ''}"
                         f"the code is the wiki's subdomain, <code>.wikipedia.org, and its dump's prefix: enwiki -> en)")


def _default_dumps() -> list[WikiDump]:
    return [
        WikiDump(
            lang="en", url=_gensim_test_dump("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
        ),
        WikiDump(lang="bg", url=_gensim_test_dump("bgwiki-latest-pages-articles-shortened.xml.bz2")),
    ]


#: Keys that say where and on how many workers a build runs, not what it builds: left out of the versions' config (and
#: so their ids), so a rerun with other workers or another store reopens the versions built before.
OPERATIONAL_KEYS = ("store", "work_dir", "workers")


class EaseCorpusConfig(Config):
    dumps: list[WikiDump] = Field(default_factory=_default_dumps, min_length=1)
    wikidata_json: str | None = None
    store: str | None = None
    work_dir: str | None = None
    name: SafeName = "ease"
    min_entity_links: int = Field(
        default=10, ge=0,
        description="keep entities linked strictly more than this many times: link occurrences in the extracted "
        "sentences, summed over languages (EASE: 10)",
    )
    negatives_per_pair: int = Field(default=1, ge=1)
    max_pairs_per_entity: int = Field(default=10_000, ge=1)
    max_pairs_per_language: int = Field(default=50_000, ge=1)
    seed: int = 0
    shard_bytes: int = Field(default=64 << 20, ge=1)
    workers: int = Field(default=2, ge=1)
    entity_vectors: Location | None = None
    entity_vector_ids: str | None = None
    vector_dim: int = Field(default=768, ge=1)
    vector_epochs: int = Field(default=5, ge=1)
    vector_method: Literal["auto", "wikipedia2vec", "skipgram"] = "auto"
    max_page_chars: int = Field(default=5_000_000, ge=1)
    max_template_depth: int = Field(default=40, ge=1)
    min_sentence_chars: int = Field(default=10, ge=1)
    max_sentence_chars: int = Field(default=2_000, ge=1)
    allow_truncated_inputs: bool = Field(
        default=False, description="a truncated/corrupt dump, Wikidata JSON or page_props file publishes what was read "
                                   "before the damage, the versions marked partial in their manifests (default: the run "
                                   "fails naming file and byte offset)")

    @model_validator(mode="after")
    def _sentence_bounds(self) -> "EaseCorpusConfig":
        if self.min_sentence_chars > self.max_sentence_chars:
            raise ValueError(f"min_sentence_chars {self.min_sentence_chars} is above max_sentence_chars "
                             f"{self.max_sentence_chars}: no sentence could be kept")
        return self

    @field_validator("dumps")
    @classmethod
    def _unique_langs(cls, dumps: list[WikiDump]) -> list[WikiDump]:
        langs = [d.lang for d in dumps]
        if len(set(langs)) != len(langs):
            raise ValueError(f"each language may have one dump; got languages {langs}")
        return dumps


CONFIG = EaseCorpusConfig


def input_urls(config: EaseCorpusConfig) -> list[str]:
    """The files the build reads (dumps, their indexes and page_props, the Wikidata JSON, the given entity vectors
    and a ``.npy`` matrix's ids file): their fingerprints enter the version ids, a recipe stage's hash and what
    ``interlingua refresh`` compares, so a file rewritten in place is read again (the extraction folder's name
    counts the dumps and their indexes only)."""
    from interlingua.operators.wiki.entity_vectors import vector_files

    urls = [d.url for d in config.dumps]
    urls += [url for d in config.dumps for url in (d.index_url, d.page_props_url) if url]
    urls += [config.wikidata_json] if config.wikidata_json else []
    return urls + (vector_files(config.entity_vectors, config.entity_vector_ids) if config.entity_vectors else [])


def input_preflight(config: EaseCorpusConfig, *, local_only: bool = True) -> None:
    """The dumps, their indexes and the entity inputs (a ``.npy`` matrix's default ids file too): found and not empty;
    ``local_only``: the files on this machine alone, before a recipe starts (its run checks the URLs too)."""
    from interlingua.core.inputs import require_input_files
    from interlingua.operators.wiki.entity_vectors import vector_files

    require_input_files([d.url for d in config.dumps], "dump", local_only=local_only)
    require_input_files([url for d in config.dumps for url in (d.index_url, d.page_props_url) if url], "dump index",
                        local_only=local_only)
    # read after Ray and the extraction, so checked now
    entity_inputs = [u for u in (config.wikidata_json, config.entity_vector_ids) if u]
    entity_inputs += vector_files(config.entity_vectors, config.entity_vector_ids) if config.entity_vectors else []
    require_input_files(dict.fromkeys(entity_inputs), "entity input", local_only=local_only)


def run(config: EaseCorpusConfig, *, address: str | None = None) -> dict[str, Any]:
    """Build and publish the corpus; returns a summary with the funnel of counts."""
    import ray.data
    from interlingua.operators.runner import run_operator
    from interlingua.operators.wiki.dump_check import check_dump
    from interlingua.operators.wiki.dump_shards import plan_shards
    from interlingua.operators.wiki.extract_operator import ExtractShards, shards_to_rows
    from interlingua.operators.wiki.wikidata import check_wikidata_head
    from interlingua.core.inputs import require_writable
    from interlingua.core.runtime import corpus_root, init_ray, state_dir

    settings = {
        "max_page_chars": config.max_page_chars,
        "max_template_depth": config.max_template_depth,
        "min_sentence_chars": config.min_sentence_chars,
        "max_sentence_chars": config.max_sentence_chars,
    }
    # the user's mistakes, before Ray starts: missing or empty dumps, an unwritable store
    input_preflight(config, local_only=False)
    require_writable(config.store or corpus_root(), "corpus store")
    for dump in config.dumps:  # a file of another format (zstd, 7z, a Wikidata JSON given as the dump) in one line
        check_dump(dump.url, dump.lang, dump.index_url)
    if config.wikidata_json:  # the wrong file, or (when its head is all of it) no sitelink to a dump's language
        check_wikidata_head(config.wikidata_json, [d.lang for d in config.dumps], config.allow_truncated_inputs)
    # before anything is read: the versions record the inputs as they were when read, not as a rewrite during the
    # (long) extraction left them
    fingerprints = build_fingerprints(input_urls(config))
    work_dir = extraction_work_dir(config, settings, config.work_dir or str(state_dir() / "work"), fingerprints)
    shards = [s for d in config.dumps for s in plan_shards(d.url, d.lang, d.index_url, config.shard_bytes)]
    init_ray(address)
    extracted = run_operator(
        ray.data.from_items(shards_to_rows(shards), override_num_blocks=len(shards)),
        ExtractShards,
        {"work_url": work_dir, "settings": settings},
        concurrency=min(config.workers, len(shards)),
    ).take_all()
    reports = {row["shard_id"]: json.loads(row["report"]) for row in extracted}
    damaged = archive_damage(shards, reports)
    if damaged and not config.allow_truncated_inputs:
        first = damaged[0]
        raise TruncatedInputError(first["input_url"], first["offset"], first["reason"] + (
            f" ({len(damaged) - 1} more damaged shard(s))" if len(damaged) > 1 else ""))
    return build_corpus(config, shards, reports, work_dir, config.store or corpus_root(), fingerprints=fingerprints)


#: What the extraction writes, in its version: raised whenever a change to the dump reading or page extraction makes
#: earlier extractions wrong (2: dumps read by their magic bytes, link targets scanned without comments), so a rerun
#: never builds on shards extracted by the code before.
EXTRACTOR_VERSION = 2


def extraction_work_dir(config: EaseCorpusConfig, settings: dict[str, int], base: str,
                        fingerprints: dict | None = None) -> str:
    """``<base>/<name>/extract-<hash>``: the hash covers the dumps (with their files' fingerprints: from
    ``fingerprints``, those of :func:`input_urls` taken before reading, else taken now), shard size and extraction
    settings and :data:`EXTRACTOR_VERSION`, so a rerun with the same ones resumes, and a changed setting, a dump
    rewritten in place or an extractor that now reads dumps otherwise never reuses stale shard extractions."""
    import hashlib

    dump_files = [url for d in config.dumps for url in (d.url, d.index_url) if url]
    if fingerprints is None:
        fingerprints = build_fingerprints(dump_files)
    identity = json.dumps(
        {"dumps": [d.model_dump() for d in config.dumps], "shard_bytes": config.shard_bytes, "settings": settings,
         "fingerprints": {redact_url(url): fingerprints[redact_url(url)].model_dump() for url in dump_files},
         "extractor": EXTRACTOR_VERSION},
        sort_keys=True,
    )
    return f"{base.rstrip('/')}/{config.name}/extract-{hashlib.sha256(identity.encode()).hexdigest()[:12]}"


#: Dump issues that mean the archive itself is cut short or corrupt (not a malformed page inside it).
ARCHIVE_DAMAGE = ("truncated_archive", "truncated_xml")


def archive_damage(shards: list, reports: dict[str, dict]) -> list[dict]:
    """One record per damaged shard (``input_url``, ``reason``, ``offset``: the file offset where it broke)."""
    damaged = []
    for shard in shards:
        for issue in reports.get(shard.shard_id, {}).get("dump_issues", []):
            if issue.get("reason") in ARCHIVE_DAMAGE:
                last = issue.get("last_page_title")
                detail = f"{issue['reason']}: {issue.get('detail', '')}" + (f" (last complete page: {last!r})" if last else "")
                damaged.append({"input_url": redact(shard.url), "reason": detail, "offset": issue.get("offset")})
                break
    return damaged


def build_corpus(
    config: EaseCorpusConfig, shards: list, reports: dict[str, dict], work_dir: str, store_url: str, *,
    fingerprints: dict | None = None,
) -> dict[str, Any]:
    """Stages 2–5 on extracted shards (driver side); see the module doc. Returns the run summary. ``fingerprints``:
    those of :func:`input_urls`, taken before the extraction read the dumps (:func:`run`); else taken now."""
    if fingerprints is None:
        fingerprints = build_fingerprints(input_urls(config))
    import pyarrow as pa
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.operators.wiki.corpus_inputs import load_catalog, wikidata_rejects
    from interlingua.operators.wiki.empty_build import require_pages, require_pairs

    funnel: Counter = Counter()
    by_lang: dict[str, Counter] = {shard.lang: Counter() for shard in shards}
    for shard in shards:
        counters = reports.get(shard.shard_id, {}).get("counters", {})
        funnel.update({f"extract_{k}": v for k, v in counters.items()})
        by_lang[shard.lang].update({k: counters.get(k, 0) for k in ("pages", "articles", "sentences", "links")})
    require_pages(config.dumps, shards, reports)
    catalog, redirects, _titles = load_catalog(config, shards, work_dir)
    pairs_by_shard, link_counts = _link_pairs(shards, work_dir, catalog, redirects, funnel)
    kept = {entity for entity, count in link_counts.items() if count > config.min_entity_links}
    funnel["entities_linked"], funnel["entities_kept"] = len(link_counts), len(kept)
    tables, mask, rejects, untyped = _negatives_and_caps(config, shards, reports, pairs_by_shard, kept, catalog, funnel)
    if catalog.lines_rejected:  # Wikidata lines that are no entity: counted and kept aside with the first shard's
        funnel["wikidata_lines_rejected"] = catalog.lines_rejected
        funnel.update({f"wikidata_lines_rejected_{k}": v for k, v in sorted(catalog.rejected_reasons.items())})
        rejects[shards[0].shard_id] += wikidata_rejects(catalog, config.wikidata_json)
    require_pairs(int(mask.sum()), funnel, link_counts, config.min_entity_links, catalog.id_source)
    manifest_config = config.model_dump(mode="json", exclude=set(OPERATIONAL_KEYS)) | {
        "entity_id_source": catalog.id_source,
        "negative_sampling": (
            "untyped: any kept entity the pair's language links (no P31 source)" if untyped
            else "same P31 type, not on page"
        ),
    }
    store = CorpusStore(store_url)
    writer = store.open_version(config.name, redact(manifest_config), redact([d.url for d in config.dumps]),
                                input_fingerprints=fingerprints)
    partial = archive_damage(shards, reports) + catalog.partial_inputs  # only with allow_truncated_inputs
    if not writer.published:
        for damaged in partial:
            writer.mark_partial(**damaged)
    offset = 0
    vocabulary: set[str] = set()
    for shard in shards:
        table = tables[shard.shard_id]
        kept_table = table.filter(pa.array(mask[offset : offset + table.num_rows]))
        offset += table.num_rows
        funnel["pairs_kept_after_caps"] += kept_table.num_rows
        by_lang[shard.lang].update(
            {
                "pairs": len(pairs_by_shard[shard.shard_id]),
                "pairs_with_negatives": table.num_rows,
                "pairs_kept": kept_table.num_rows,
            }
        )
        vocabulary.update(kept_table.column("entity_id").to_pylist())
        vocabulary.update(n for negatives in kept_table.column("hard_negative_ids").to_pylist() for n in negatives)
        if not writer.published and not writer.is_complete(shard.shard_id):
            counters = _shard_counters(reports.get(shard.shard_id, {}))
            writer.write_shard(shard.shard_id, kept_table, rejects=redact(rejects[shard.shard_id]), counters=counters)
    if not writer.published:
        writer.add_counters({k: v for k, v in funnel.items() if not k.startswith("extract_")})
    manifest = writer.publish(expected_shards=[s.shard_id for s in shards])
    entities = _publish_entities(
        config, store, manifest_config, sorted(vocabulary), link_counts, catalog, redirects, work_dir, shards,
        fingerprints, partial,
    )
    return {
        "corpus": f"{config.name}/{manifest.version}",
        "entities": entities,
        "entity_id_source": catalog.id_source,
        "funnel": dict(funnel),
        "funnel_by_lang": {lang: dict(counts) for lang, counts in by_lang.items()},
        "dump_issues": [issue | {"shard": sid} for sid, r in reports.items() for issue in r.get("dump_issues", [])],
    }


def _link_pairs(shards, work_dir, catalog, redirects, funnel: Counter):
    """Stage 2: per shard, (sentence, entity) pairs; and link counts per entity over all languages."""
    from interlingua.operators.wiki.corpus_inputs import read_extracted
    from interlingua.operators.wiki.entity_pairs import link_pairs

    link_counts: Counter = Counter()
    pairs_by_shard = {}
    for shard in shards:
        sentences = read_extracted(work_dir, shard, "sentences")
        pages = read_extracted(work_dir, shard, "pages")
        pairs = link_pairs(sentences, pages, shard.lang, redirects[shard.lang], catalog, funnel)
        link_counts.update(pairs.column("entity_id").to_pylist())
        pairs_by_shard[shard.shard_id] = pairs
    return pairs_by_shard, link_counts


def _negatives_and_caps(config, shards, reports, pairs_by_shard, kept, catalog, funnel: Counter):
    """Stages 3–4: ``(corpus tables by shard, keep mask over their concatenation, rejects by shard, untyped)``."""
    import numpy as np
    from interlingua.operators.wiki.corpus_inputs import shard_rejects
    from interlingua.operators.wiki.entity_pairs import attach_negatives
    from interlingua.operators.wiki.hard_negatives import HardNegativeSampler
    from interlingua.operators.wiki.sampling_caps import capped_mask

    untyped = not catalog.has_types
    language_entities: dict[str, set[str]] | None = None
    if untyped:  # untyped negatives come from the pair's own language: the entities its sentences link
        language_entities = {shard.lang: set() for shard in shards}
        for shard in shards:
            language_entities[shard.lang].update(pairs_by_shard[shard.shard_id].column("entity_id").to_pylist())
    sampler = HardNegativeSampler(
        kept, catalog.types, k=config.negatives_per_pair, seed=config.seed, untyped=untyped,
        language_entities=language_entities,
    )
    tables, priorities, rejects = {}, {}, {}
    for shard in shards:
        table, shard_priorities, negative_rejects = attach_negatives(
            pairs_by_shard[shard.shard_id], kept, sampler, config.seed, funnel
        )
        tables[shard.shard_id], priorities[shard.shard_id] = table, shard_priorities
        rejects[shard.shard_id] = negative_rejects + shard_rejects(reports.get(shard.shard_id, {}))
    order = [s.shard_id for s in shards]
    mask = capped_mask(
        np.concatenate([np.asarray(tables[s].column("lang").to_pylist(), dtype=object) for s in order]),
        np.concatenate([np.asarray(tables[s].column("entity_id").to_pylist(), dtype=object) for s in order]),
        np.concatenate([np.asarray(priorities[s], dtype=np.int64) for s in order]),
        config.max_pairs_per_entity,
        config.max_pairs_per_language,
    )
    return tables, mask, rejects, sampler.untyped


def _shard_counters(report: dict) -> dict[str, int]:
    counters = {f"extract_{k}": int(v) for k, v in report.get("counters", {}).items()}
    counters |= {f"markup_{k}": int(v) for k, v in report.get("markup_issues", {}).items()}
    return counters


def _publish_entities(
    config, store, manifest_config, vocabulary, link_counts, catalog, redirects, work_dir, shards, fingerprints,
    partial=(),
) -> str:
    """Stage 5b: the entity vocabulary (ids, link counts, P31 types, vectors) as corpus ``<name>-entities``; marked
    partial with the corpus (``partial``: the inputs read in part)."""
    import pyarrow as pa
    from interlingua.operators.wiki.entity_vectors import vectors_for

    vectors, method = _entity_vectors(config, catalog, redirects, work_dir, shards)
    dim = next(iter(vectors.values())).shape[0] if config.entity_vectors and vectors else config.vector_dim
    matrix, missing = vectors_for(vocabulary, vectors, dim, seed=config.seed)
    table = pa.table(
        {
            "entity_id": pa.array(vocabulary, pa.string()),
            "link_count": pa.array([link_counts.get(e, 0) for e in vocabulary], pa.int64()),
            "types": pa.array([list(catalog.types.get(e, ())) for e in vocabulary], pa.list_(pa.string())),
            "vector": pa.array(list(matrix), pa.list_(pa.float32())),
        }
    )
    entities_config = manifest_config | {"vector_source": method}
    writer = store.open_version(f"{config.name}-entities", redact(entities_config),
                                redact([d.url for d in config.dumps]), input_fingerprints=fingerprints)
    if not writer.published:
        for damaged in partial:
            writer.mark_partial(**damaged)
        counters = {"entities": len(vocabulary), "vectors_missing_random_init": missing}
        writer.write_shard("entities-00000", table, counters=counters)
    manifest = writer.publish(expected_shards=["entities-00000"])
    return f"{config.name}-entities/{manifest.version}"


def _entity_vectors(config, catalog, redirects, work_dir, shards):
    """``(entity id → vector, how they were made)``: the given file; else Wikipedia2Vec trained on each dump
    (``vector_method`` auto/wikipedia2vec; the first dump in config order that has an entity wins); else (or
    if Wikipedia2Vec is missing or fails) gensim skip-gram over the extracted link contexts."""
    from interlingua.operators.wiki.corpus_inputs import train_vectors_from_extracts
    from interlingua.operators.wiki.entity_vectors import load_entity_vectors
    from interlingua.core.archives import DECOMPRESSION_ERRORS, is_read_failure
    from interlingua.operators.wiki.wikipedia2vec_vectors import (
        VECTORS_FILE,
        train_wikipedia2vec,
        vector_source,
        vectors_folder,
        wikipedia2vec_available,
        wikipedia2vec_entity_vectors,
    )

    if config.entity_vectors:
        return load_entity_vectors(config.entity_vectors, config.entity_vector_ids), f"file {config.entity_vectors}"
    note = ""
    if config.vector_method == "wikipedia2vec" or (config.vector_method == "auto" and wikipedia2vec_available()):
        try:
            vectors: dict = {}
            for dump in config.dumps:
                folder = vectors_folder(work_dir, dump.lang, config.vector_dim, config.vector_epochs, config.seed)
                model = f"{folder}/{VECTORS_FILE}"
                if not Path(model).exists():  # seeded, on one process: never config.workers (see README)
                    args = (dump.url, folder, config.vector_dim, config.vector_epochs, config.seed)
                    try:
                        model = train_wikipedia2vec(*args)
                    except RuntimeError:  # e.g. too few links for a link graph: words and anchors only
                        model = train_wikipedia2vec(*args, link_graph=False)
                lang, table = dump.lang, redirects[dump.lang]
                for entity, vector in wikipedia2vec_entity_vectors(
                    model, lambda title, lang=lang, table=table: catalog.entity_id(lang, table.resolve(title))
                ).items():
                    vectors.setdefault(entity, vector)
            return vectors, vector_source()
        except (RuntimeError, ImportError, *DECOMPRESSION_ERRORS) as error:  # a damaged dump's copy for it too
            if config.vector_method == "wikipedia2vec" or is_read_failure(error):  # a disk or network error: raised
                raise
            note = f" (wikipedia2vec failed: {str(error)[:200]})"
    vectors = train_vectors_from_extracts(
        shards, work_dir, catalog, redirects, config.vector_dim, config.vector_epochs, config.seed
    )
    return vectors, "gensim skip-gram over link contexts" + note
