"""What changed between two versions of a corpus (``interlingua corpus diff NAME V1 V2``)."""

from __future__ import annotations

from typing import Any

from interlingua.operators.corpus.manifest import Manifest


def version_diff(old: Manifest, new: Manifest) -> dict[str, Any]:
    """Inputs (added / removed / changed, by URL and fingerprint; ``inputs_not_compared``: fingerprints of
    different kinds, a modification time against a hash), shards (shared by SHA-256, only in
    one version), rows, rejects and counters (new minus old), whether the config changed, and the
    newer version's lineage when it was refreshed from the older one."""
    old_inputs, new_inputs = set(old.inputs), set(new.inputs)
    recorded = sorted(url for url in old_inputs & new_inputs
                      if url in old.input_fingerprints and url in new.input_fingerprints)
    same = {url: old.input_fingerprints[url].same_as(new.input_fingerprints[url]) for url in recorded}
    changed = [url for url in recorded if same[url] is False]
    # an older refresh recorded a local file's modification time, a build its SHA-256: not comparable
    not_compared = [url for url in recorded if same[url] is None]
    old_shards = {s.sha256: s.shard_id for s in old.shards}
    new_shards = {s.sha256: s.shard_id for s in new.shards}
    counters = {key: new.counters.get(key, 0) - old.counters.get(key, 0)
                for key in sorted(set(old.counters) | set(new.counters))}
    return {
        "name": new.name,
        "old": old.version,
        "new": new.version,
        "config_changed": old.config_hash != new.config_hash,
        "inputs_added": sorted(new_inputs - old_inputs),
        "inputs_removed": sorted(old_inputs - new_inputs),
        "inputs_changed": changed,
        "inputs_not_compared": not_compared,
        "shards_shared": sorted(new_shards[sha] for sha in new_shards.keys() & old_shards.keys()),
        "shards_only_old": sorted(old_shards[sha] for sha in old_shards.keys() - new_shards.keys()),
        "shards_only_new": sorted(new_shards[sha] for sha in new_shards.keys() - old_shards.keys()),
        "rows": {"old": old.total_rows, "new": new.total_rows, "delta": new.total_rows - old.total_rows},
        "rejects": {"old": old.total_rejects, "new": new.total_rejects, "delta": new.total_rejects - old.total_rejects},
        "counters_delta": {key: value for key, value in counters.items() if value},
        "lineage": new.lineage.model_dump() if new.lineage is not None and new.lineage.parent == old.version else None,
    }


def format_diff(diff: dict[str, Any]) -> str:
    """Readable lines for the console."""
    lines = [f"{diff['name']}: {diff['old']} -> {diff['new']}"
             + ("  (config changed: a different line of versions)" if diff["config_changed"] else "")]
    for key in ("inputs_added", "inputs_removed", "inputs_changed"):
        label = key.replace("_", " ")
        lines.append(f"{label:<15} {', '.join(diff[key]) or '-'}")
    if diff.get("inputs_not_compared"):
        lines.append(f"{'not compared':<15} {', '.join(diff['inputs_not_compared'])} (one version recorded a "
                     "modification time, the other a content hash)")
    lines.append(f"{'shards':<15} {len(diff['shards_shared'])} shared, {len(diff['shards_only_old'])} only in "
                 f"{diff['old']}, {len(diff['shards_only_new'])} only in {diff['new']}")
    for key in ("rows", "rejects"):
        value = diff[key]
        lines.append(f"{key:<15} {value['old']} -> {value['new']} ({value['delta']:+d})")
    counters = ", ".join(f"{k}={v:+d}" for k, v in diff["counters_delta"].items()) or "-"
    lines.append(f"{'counters':<15} {counters}")
    lineage = diff["lineage"]
    if lineage is not None:
        steps = ", ".join(f"{k}={v}" for k, v in lineage["counters"].items()) or "-"
        lines.append(f"{'lineage':<15} {lineage['mode']} refresh: {lineage['shards_reused']} shard(s) reused, "
                     f"{lineage['shards_written']} written; counts of this refresh: {steps}")
        lines += [f"{'':<15} {note}" for note in lineage["notes"]]
    return "\n".join(lines)
