"""``interlingua refresh CORPUS_SPEC.yaml``: bring a corpus up to date with its inputs, incrementally.

A refresh spec names a corpus workflow and its config::

    workflow: bitext-corpus            # bitext-corpus | ease-corpus | amr-corpus
    inputs: ["data/pairs-*.tsv"]       # bitext-corpus: fsspec URLs or globs (TSV or Parquet files)
    config: {src_lang: en, tgt_lang: es, corpus_name: my-bitext}
    keep_versions: 5                   # optional retention after publishing
    relearn_share: 0.25                # bitext-corpus: when fast_align parameters are learned anew

(ease-corpus and amr-corpus take their inputs from their config: ``dumps[*].url``, ``source``.)

Steps: list the inputs, fingerprint them (size + ETag, else the content's SHA-256, remembered by path, size
and modification time so an unchanged file is read once), compare with the fingerprints in the latest
version's manifest, then

* nothing added, changed or removed -> no new version (says so, exit 0);
* the spec's config hash differs from the latest version's -> a **new line** of versions, built in full;
* otherwise a new version whose lineage names its parent and the inputs added / changed / removed.
  ``bitext-corpus`` refreshes **incrementally**: the shards of unchanged inputs are reused without
  copying (hard links locally, references elsewhere; SHA-256 re-checked on read), only new and changed
  inputs are read, deduplicated against the kept pairs, tokenized and aligned — with the parent's
  fast_align parameters unless the pairs those parameters were not learned on would exceed
  ``relearn_share`` of the new version; then the parameters are learned anew on all pairs and every
  shard is rebuilt (each shard records the parameters' id and whether they were learned on it).
  ``ease-corpus`` and ``amr-corpus`` rebuild in full: their steps span all inputs (entity link counts,
  hard negatives; one NLI source), which the refresh states.

A refresh that fails midway publishes nothing (``latest`` stays); rerunning resumes the same version
(same fingerprints, same version id) from the shards already written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field, PrivateAttr

from interlingua.core.config import Config
from interlingua.core.errors import UserError
from interlingua.core.redact import redact


class RefreshSpec(Config):
    """A corpus to keep fresh: the workflow, its config, its inputs and the retention policy."""

    workflow: Literal["bitext-corpus", "ease-corpus", "amr-corpus"]
    inputs: list[str] = Field(default_factory=list, description="bitext-corpus: input files (fsspec URLs or globs)")
    config: dict[str, Any] = Field(default_factory=dict, description="the workflow's config, without its inputs")
    keep_versions: int | None = Field(default=None, ge=1, description="after publishing, keep the last N versions")
    relearn_share: float = Field(default=0.25, gt=0.0, le=1.0,
                                 description="bitext-corpus: relearn fast_align when more than this share of the "
                                             "new version's pairs were not seen by the parent's parameters")
    _path: str | None = PrivateAttr(default=None)  # the file load_spec read the spec from

    def config_source(self) -> str:
        """What an error in the workflow's config names: the spec file's ``config`` section (a spec built in Python:
        the refresh spec's config)."""
        return f"{self._path}, under config" if self._path else "refresh spec config"


@dataclass
class RefreshPlan:
    """What a refresh found before building anything."""

    corpus: str
    store_root: str
    urls: list[str]
    fingerprints: dict[str, Any]
    spec_config: dict[str, Any]
    spec_config_hash: str
    parent: Any = None
    mode: str = "full"
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def nothing_new(self) -> bool:
        return self.parent is not None and self.mode == "incremental" and not (self.added or self.changed or self.removed)


def refresh(spec: RefreshSpec, *, address: str | None = None, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Run one refresh; returns a summary (``published``: whether a new version was made)."""
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.workflows.cluster_models import refuse_models_only_the_cluster_has

    adapter = _ADAPTERS[spec.workflow]
    workflow_config = _validated(spec)
    adapter.check_first(workflow_config)  # before any input is listed, hashed or read
    # the config hash counts model folders as this machine has them: on a cluster, one only the cluster has,
    # rewritten there, would be "nothing new"; refused, as a recipe refuses it
    refuse_models_only_the_cluster_has(adapter.workflow() if hasattr(adapter, "workflow") else None, workflow_config,
                                       address, spec.workflow)
    plan = _plan(spec, adapter, workflow_config)
    store = CorpusStore(plan.store_root)
    parent = plan.parent
    if plan.nothing_new:
        log(f"refresh {plan.corpus}: nothing new since {parent.version} ({len(plan.unchanged)} input(s) unchanged); "
            "no new version")
        return {"corpus": plan.corpus, "published": False, "version": parent.version, "mode": "unchanged"}
    log(f"refresh {plan.corpus}: {len(plan.added)} input(s) added, {len(plan.changed)} changed, "
        f"{len(plan.removed)} removed, {len(plan.unchanged)} unchanged"
        + (f" since {parent.version}" if parent is not None else " (no earlier version)"))
    summary = adapter.build(spec, plan, workflow_config, store, address)
    manifest = store.manifest(plan.corpus, summary["version"])
    lineage = manifest.lineage
    for note in lineage.notes if lineage else ():
        log(f"  {note}")
    log(f"published {plan.corpus}/{manifest.version} ({lineage.mode if lineage else plan.mode}): {manifest.total_rows} rows, "
        f"{lineage.shards_reused if lineage else 0} shard(s) reused, {lineage.shards_written if lineage else len(manifest.shards)} "
        f"written; latest -> {store.latest_version(plan.corpus)}")
    result = {"corpus": plan.corpus, "published": True, "version": manifest.version,
              "mode": lineage.mode if lineage else plan.mode, "parent": parent.version if parent else None,
              "inputs_added": redact(plan.added), "inputs_changed": redact(plan.changed),
              "inputs_removed": redact(plan.removed),
              "rows": manifest.total_rows, "shards_reused": lineage.shards_reused if lineage else 0,
              "shards_written": lineage.shards_written if lineage else len(manifest.shards)}
    if spec.keep_versions is not None:
        from interlingua.workflows.corpus_retention import apply_retention, retention_text

        retention = apply_retention(store, plan.corpus, spec.keep_versions)
        log(retention_text(plan.corpus, retention))
        result["retention"] = retention
    return result


def _validated(spec: RefreshSpec):
    """The spec's workflow config, validated, and the URLs it names (inputs, the store's root if it gives one) each
    with a protocol fsspec knows (one line naming the closest one otherwise): before any input is listed or the store
    opened. Nothing is created: the default store root (under the state folder, a local path) is not worked out here,
    so a mistyped INTERLINGUA_HOME is not made by a spec check (and `submit refresh`'s job has its own)."""
    from interlingua.core.url_filesystems import require_known_protocol

    adapter = _ADAPTERS[spec.workflow]
    config = adapter.validate(spec)
    given_root = adapter.named_target(config)[1]
    for url in [*adapter.inputs(spec, config), *([given_root] if given_root else [])]:
        require_known_protocol(url)
    return config


def _target(adapter, config) -> tuple[str, str]:
    """The corpus name and its store root: the one the config names, else ``<state>/corpus`` (the state folder made)."""
    from interlingua.core.runtime import corpus_root

    corpus, given_root = adapter.named_target(config)
    return corpus, given_root or corpus_root()


def _plan(spec: RefreshSpec, adapter, workflow_config) -> RefreshPlan:
    from interlingua.operators.corpus.input_fingerprints import build_fingerprints, list_inputs
    from interlingua.operators.corpus.manifest import config_hash
    from interlingua.operators.corpus.store import CorpusLookupError, CorpusStore

    corpus, store_root = _target(adapter, workflow_config)
    from interlingua.core.redact import redact_url

    urls = list_inputs(adapter.inputs(spec, workflow_config))
    # Provenance is keyed by the redacted URL: credentials never reach the manifest, and the comparison
    # with the parent's record (redacted the same way) still matches input for input.
    fingerprints = build_fingerprints(urls)  # what a direct build records: the same bytes, the same fingerprint
    spec_config = adapter.spec_config(workflow_config)
    plan = RefreshPlan(corpus, store_root, urls, fingerprints, spec_config, config_hash(spec_config))
    store = CorpusStore(store_root)
    try:
        parent = store.manifest(corpus)
    except CorpusLookupError:
        plan.notes.append("first version of this corpus: built from every input")
        plan.added = list(urls)
        return plan
    plan.parent = parent
    recorded = parent.input_fingerprints
    parent_hash = parent.lineage.spec_config_hash if parent.lineage is not None else None
    if parent_hash is None or not recorded:
        plan.notes.append(f"the latest version {parent.version} was not made by refresh (no input fingerprints): "
                          "built from every input")
        plan.added = list(urls)
        return plan
    if parent_hash != plan.spec_config_hash:
        plan.mode = "new-line"
        plan.notes.append(f"config changed (hash {parent_hash[:12]} -> {plan.spec_config_hash[:12]}): a new line of "
                          f"versions, built in full from every input, not an incremental refresh of {parent.version}")
        plan.added = list(urls)
        return plan
    plan.mode = "incremental"
    key = redact_url
    plan.added = [u for u in urls if key(u) not in recorded]
    plan.removed = sorted(u for u in recorded if u not in fingerprints)
    kept = [u for u in urls if key(u) in recorded]
    same = {u: _unchanged(recorded[key(u)], fingerprints[key(u)], u) for u in kept}
    plan.changed = [u for u in kept if not same[u]]
    plan.unchanged = [u for u in kept if same[u]]
    return plan


def _unchanged(recorded, current, url: str) -> bool:
    """Whether the input is as the parent recorded it. A parent made before refreshes hashed local files recorded
    their modification time: it is compared with the file's modification time now."""
    from interlingua.operators.corpus.input_fingerprints import fingerprint

    same = recorded.same_as(current)
    if same is None:
        same = recorded.same_as(fingerprint(url)) is True
    return same


def _lineage(plan: RefreshPlan, mode: str, notes: list[str]):
    from interlingua.core.redact import redact_url
    from interlingua.operators.corpus.manifest import Lineage

    def urls(values) -> tuple[str, ...]:
        return tuple(redact_url(u) for u in values)

    return Lineage(parent=plan.parent.version if plan.parent is not None else None,
                   spec_config_hash=plan.spec_config_hash, mode=mode, inputs_added=urls(plan.added),
                   inputs_changed=urls(plan.changed), inputs_removed=urls(plan.removed),
                   inputs_unchanged=urls(plan.unchanged), notes=tuple(notes))


# -- bitext-corpus: incremental ------------------------------------------------------------------


class _BitextAdapter:

    def validate(self, spec: RefreshSpec):
        from interlingua.core.config import validate
        from interlingua.workflows.bitext_corpus import BitextCorpusConfig

        for key in ("source", "target"):
            if key in spec.config:
                raise UserError(f"refresh spec: config.{key} is set; list the input files under 'inputs' instead")
        if not spec.inputs:
            raise UserError("refresh spec: bitext-corpus needs 'inputs' (TSV or Parquet files, URLs or globs)")
        config = validate(BitextCorpusConfig, dict(spec.config), source=spec.config_source())
        if config.format == "text":
            raise UserError("refresh of bitext-corpus reads TSV or Parquet inputs (one file per input); "
                            "format text needs two files per input — convert them to TSV")
        return config

    def check_first(self, config) -> None:
        """``aligner: eflomal``: its seeded binary runs from this state folder (:func:`require_aligner_runnable`)."""
        from interlingua.workflows.bitext_corpus import require_aligner_runnable

        require_aligner_runnable(config)

    def named_target(self, config) -> tuple[str, str | None]:
        """The corpus name and the store root the config names (None: the default, :func:`_target`)."""
        return config.corpus_name, config.store_root

    def inputs(self, spec: RefreshSpec, config) -> list[str]:
        return list(spec.inputs)

    def spec_config(self, config) -> dict[str, Any]:
        from interlingua.workflows.bitext_corpus import OPERATIONAL_KEYS, identity_config

        # the bitext's operational keys and its files (inputs here); a tokenizer rewritten, or links decoded otherwise
        # (bitext_corpus.LINKS_VERSION): a new line
        return identity_config(config.model_dump(mode="json", exclude={*OPERATIONAL_KEYS, "source", "target"}))

    def build(self, spec: RefreshSpec, plan: RefreshPlan, config, store, address) -> dict[str, Any]:
        from interlingua.operators.corpus.shards import ShardSpec, plan_shards
        from interlingua.workflows.bitext_corpus import (PARAMS_LAYOUT, apply_hygiene, build_version, read_rows,
                                                         resolve_format)

        for url in plan.urls:
            if resolve_format(config.model_copy(update={"source": url}), url) == "text":
                raise UserError(f"input {url} is not TSV or Parquet; refresh of bitext-corpus reads one file per input")
        parent, notes = plan.parent, list(plan.notes)
        mode = plan.mode
        from interlingua.core.redact import redact_url

        unchanged = {redact_url(u) for u in plan.unchanged}
        reuse = [s for s in parent.shards if s.input in unchanged] if mode == "incremental" else []
        process = [u for u in plan.urls if u in set(plan.added) | set(plan.changed)] if mode == "incremental" else plan.urls
        # an input with no rows is refused, as a build refuses it (its shards would be none); rows without an id
        # column are numbered per input, so each input's numbers carry its key: ids stay unique across inputs
        def rows_of(url: str) -> list[dict[str, Any]]:
            return read_rows(config.model_copy(update={"source": url}), url, numbered=f"{_input_key(url)}:")

        rows_by_url = {url: rows_of(url) for url in process}
        inherited = False
        folder = PARAMS_LAYOUT[config.aligner][0]
        seen_pairs: list[tuple[str, str]] = []
        if mode == "incremental":
            for shard in reuse:  # the pairs kept from the parent: new pairs equal to one are duplicates
                table = store._read_checked(store._file_path(parent.name, parent.version, shard), shard.sha256,
                                            ["src", "tgt"], size=shard.bytes, manifest=parent)
                seen_pairs += zip(table.column("src").to_pylist(), table.column("tgt").to_pylist())
            # the new pairs the version will hold: what hygiene and deduplication keep (build_version applies the
            # same hygiene to the same rows again); the share is of the new version's pairs
            new_rows = [row for url in process for row in rows_by_url[url]]
            apply_hygiene(new_rows, config, seen_pairs)
            new_pairs = sum(row["status"] in ("kept", "empty_kept") for row in new_rows)
            unseen = sum(s.rows for s in reuse if s.annotations.get(f"{folder}.learned_on") == "no") + new_pairs
            total = sum(s.rows for s in reuse) + new_pairs
            share = unseen / max(1, total)
            unseen_text = f"{unseen} of the new version's {total} pairs ({share:.1%}) were not seen by"
            has_params = any(f.path.startswith(f"{folder}/") for f in parent.artifacts)
            if has_params and share <= spec.relearn_share:
                inherited = True
                notes.append(f"{folder} parameters of {parent.version} reused: {unseen_text} them (relearn above "
                             f"relearn_share {spec.relearn_share:.0%})")
            else:
                why = (f"{unseen_text} the parent's parameters (> relearn_share {spec.relearn_share:.0%})"
                       if has_params else f"the parent has no {folder} parameters")
                notes.append(f"{folder} parameters learned anew, every shard rebuilt: {why}")
                mode, reuse, process, seen_pairs = "full", [], plan.urls, []
                rows_by_url.update({u: rows_of(u) for u in process if u not in rows_by_url})
        writer = store.open_version(plan.corpus, plan.spec_config, [redact_url(u) for u in plan.urls],
                                    input_fingerprints=plan.fingerprints, lineage=_lineage(plan, mode, notes))
        reused_ids = []
        if not writer.published:
            for shard in reuse:
                if not writer.is_complete(shard.shard_id):
                    writer.reuse_shard(shard, parent)
                reused_ids.append(shard.shard_id)
            if inherited and not writer.artifact_files(folder):
                writer.reuse_artifact(folder, parent)
        rows: list[dict[str, Any]] = []
        shards: list = []
        shard_inputs: dict[str, str] = {}
        for url in process:
            part = rows_by_url[url]
            for planned in plan_shards(len(part), config.rows_per_shard):
                shard_id = f"in-{_input_key(url)}-{planned.id}"
                shards.append(ShardSpec(shard_id, planned.start + len(rows), planned.stop + len(rows)))
                shard_inputs[shard_id] = redact_url(url)
            rows += part
        return build_version(config, store, writer, rows, shards, shard_inputs=shard_inputs, seen_pairs=seen_pairs,
                             reused_shards=reused_ids, inherited_parameters=inherited, address=address)


def _input_key(url: str) -> str:
    """A refresh input's key: its shards' ids (``in-<key>-…``) and its numbered rows' ids (``<key>:<n>``) hold it."""
    return hashlib.sha256(url.encode("utf-8")).hexdigest()[:10]


# -- ease-corpus, amr-corpus: full rebuilds with lineage -----------------------------------------


class _FullRebuildAdapter:
    """Workflows whose steps span all their inputs: a refresh rebuilds them when an input changed."""

    def __init__(self, module: str, why: str):
        self.module, self.why = module, why

    def workflow(self):
        import importlib

        return importlib.import_module(self.module)

    def validate(self, spec: RefreshSpec):
        from interlingua.core.config import validate

        if spec.inputs:
            raise UserError(f"refresh spec: {spec.workflow} takes its inputs from its config; remove 'inputs'")
        return validate(self.workflow().CONFIG, dict(spec.config), source=spec.config_source())

    def check_first(self, config) -> None:
        """Nothing to check before the inputs: the workflow's own ``run`` checks its machine."""

    def named_target(self, config) -> tuple[str, str | None]:
        """The corpus name and the store root the config names (None: the default, :func:`_target`)."""
        if hasattr(config, "dumps"):
            return config.name, config.store
        return config.corpus_name, config.store_root

    def inputs(self, spec: RefreshSpec, config) -> list[str]:
        """What a direct build fingerprints (``ease-corpus``: the dumps, their indexes and page_props, the
        Wikidata JSON, the given entity vectors and their ids file), so a refresh sees each of them change;
        ``amr-corpus``: its NLI source."""
        return self.workflow().input_urls(config) or [config.source]

    def spec_config(self, config) -> dict[str, Any]:
        data = config.model_dump(mode="json")
        for key in ("workers", "work_dir", "store", "store_root", "source", "translate_actors", "parse_actors"):
            data.pop(key, None)
        if "dumps" in data:
            data["dumps"] = [{k: v for k, v in d.items() if k != "url"} for d in data["dumps"]]
        from interlingua.models.identity import with_model_files  # a parser rewritten in place: a new line

        # a workflow whose output from the same config changed adds its marks (amr_corpus.identity_config): a new line
        return getattr(self.workflow(), "identity_config", with_model_files)(data)

    def build(self, spec: RefreshSpec, plan: RefreshPlan, config, store, address) -> dict[str, Any]:
        from interlingua.operators.corpus.store import recording_refresh

        notes = list(plan.notes)
        mode = plan.mode if plan.mode == "new-line" else "full"
        if plan.mode == "incremental":
            notes.append(f"{spec.workflow} refreshes in full: {self.why}")
        with recording_refresh(plan.corpus, plan.fingerprints, _lineage(plan, mode, notes)):
            self.workflow().run(config, address=address)
        return {"version": _published_version(store, plan)}


def _published_version(store, plan: RefreshPlan) -> str:
    """The version the workflow just published: the latest one whose fingerprints are the plan's."""
    manifest = store.manifest(plan.corpus)
    if manifest.input_fingerprints != plan.fingerprints:
        raise RuntimeError(f"{plan.corpus}: the workflow did not publish a version with this refresh's inputs")
    return manifest.version


_ADAPTERS = {
    "bitext-corpus": _BitextAdapter(),
    "ease-corpus": _FullRebuildAdapter("interlingua.workflows.ease_corpus",
                                       "entity link counts and hard negatives are computed over all dumps"),
    "amr-corpus": _FullRebuildAdapter("interlingua.workflows.amr_corpus", "it reads one NLI source"),
}


def load_spec(path: str, overrides: Sequence[str] = (), check: Callable[[dict], Any] | None = None) -> RefreshSpec:
    """The spec at ``path`` (``overrides``: ``--set KEY=VALUE`` on it; ``check``: called with the merged values
    before validation), its workflow config validated too (a mistake fails now, as one line)."""
    from interlingua.core.config import load_config
    from interlingua.core.url_filesystems import url_filesystem

    if not path:
        raise UserError("no refresh spec given (hint: -c SPEC.yaml, the YAML with workflow, inputs and config)")
    fs, local = url_filesystem(path)
    if not fs.exists(local):
        raise UserError(f"refresh spec {path} not found (hint: the YAML with workflow, inputs and config)")
    spec = load_config(RefreshSpec, path, list(overrides), check=check)
    spec._path = path
    _validated(spec)
    return spec
