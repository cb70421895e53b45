"""The ``README.md`` dataset card of a corpus version: what makes a version folder a dataset.

``datasets.load_dataset(VERSION_FOLDER)`` reads the card's YAML ``configs:``: the ``default`` config
lists the shard files (``data/<shard>.parquet``, or ``../<version>/data/...`` for a shard reused by
reference from an older version), the ``rejects`` config the rejects files. ``manifest.json``,
completion records and artifacts (``fast_align/``) are outside both, so neither loader trips on them.
"""

from __future__ import annotations

import json

from interlingua.operators.corpus.manifest import Manifest, ShardRecord

CARD_FILE = "README.md"


def shard_location(shard: ShardRecord, relative_path: str) -> str:
    """``relative_path`` of ``shard`` as seen from the version folder that publishes it."""
    return relative_path if shard.stored_in is None else f"../{shard.stored_in}/{relative_path}"


def dataset_card(manifest: Manifest) -> str:
    """The card's text: YAML front matter (``configs``) plus a short human summary."""
    data_files = [shard_location(s, s.path) for s in manifest.shards]
    reject_files = [shard_location(s, s.rejects_path) for s in manifest.shards if s.rejects_path is not None]
    lines = ["---", "configs:", "- config_name: default", "  default: true", "  data_files:",
             "  - split: train", "    path:"]
    lines += [f"    - {json.dumps(path)}" for path in data_files]
    if reject_files:
        lines += ["- config_name: rejects", "  data_files:", "  - split: train", "    path:"]
        lines += [f"    - {json.dumps(path)}" for path in reject_files]
    lines += ["---", "", f"# {manifest.name} {manifest.version}", "",
              f"{manifest.total_rows} rows in {len(manifest.shards)} Parquet shards; {manifest.total_rejects} rejected "
              "rows in the `rejects` config (shard, operator, reason, original row as JSON).", ""]
    if manifest.partial:
        lines += [f"**Partial version**: {manifest.partial_note()}.", ""]
    lines += ["```python", "import datasets", "corpus = datasets.load_dataset(\"path/to/this/folder\")",
              "rejects = datasets.load_dataset(\"path/to/this/folder\", \"rejects\")", "```", "",
              "| column | type |", "|---|---|"]
    lines += [f"| `{name}` | `{kind}` |" for name, kind in manifest.columns.items()]
    lines += ["", f"Config hash `{manifest.config_hash[:12]}`; inputs: {', '.join(manifest.inputs) or 'none'}."]
    if manifest.lineage is not None:
        lineage = manifest.lineage
        lines += ["", f"Refreshed ({lineage.mode}) from `{lineage.parent}`: {len(lineage.inputs_added)} input(s) added, "
                      f"{len(lineage.inputs_changed)} changed, {len(lineage.inputs_removed)} removed; "
                      f"{lineage.shards_reused} shard(s) reused, {lineage.shards_written} written."]
    lines += ["", "Provenance, checksums and counts: `manifest.json`.", ""]
    return "\n".join(lines)
