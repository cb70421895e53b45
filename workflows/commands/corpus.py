"""``interlingua corpus``: list published corpus versions, show one version's manifest.

    interlingua corpus list [--name NAME] [--root URL]
    interlingua corpus show NAME [--version V] [--json] [--root URL]

The store root defaults to ``<state_dir>/corpus`` where the state dir is ``$INTERLINGUA_HOME``
or ``./.interlingua``. Exit status: 0 on success, 2 when the corpus or version does not exist or
an option is invalid (the message on stderr names what does exist).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from interlingua.operators.corpus import CorpusStore, Manifest, VersionSummary

HELP = "list published corpus versions or show one version's manifest"

STATE_DIR_ENV = "INTERLINGUA_HOME"
DEFAULT_STATE_DIR = ".interlingua"


def default_corpus_root() -> str:
    """``<state_dir>/corpus``: ``$INTERLINGUA_HOME/corpus``, else ``.interlingua/corpus``."""
    state_dir = os.environ.get(STATE_DIR_ENV) or DEFAULT_STATE_DIR
    return f"{state_dir.rstrip('/')}/corpus"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="corpus_action", required=True, metavar="{list,show}")

    list_parser = actions.add_parser("list", help="one line per published version")
    list_parser.add_argument("--name", default=None, help="only the versions of this corpus")
    _add_root_argument(list_parser)

    show_parser = actions.add_parser("show", help="a version's manifest: summary, or JSON with --json")
    show_parser.add_argument("name", help="corpus name")
    show_parser.add_argument("--version", default="latest", help="version id (default: latest)")
    show_parser.add_argument("--json", action="store_true", help="print the full manifest as JSON")
    _add_root_argument(show_parser)


def run(args: argparse.Namespace) -> int:
    from interlingua.core.redact import redact, redact_text
    from interlingua.operators.corpus import CorpusLookupError, CorpusStore

    root = args.root or default_corpus_root()
    try:
        store = CorpusStore(root)
        if args.corpus_action == "list":
            print(redact_text(_format_version_list(store.list_versions(args.name), root)))
        else:
            manifest = store.manifest(args.name, args.version)
            # a store may be shared and older manifests may hold credentials: never print them
            shown = manifest.model_copy(update={"inputs": tuple(redact(list(manifest.inputs))),
                                                "config": redact(dict(manifest.config))})
            print(redact_text(shown.to_json() if args.json else _format_manifest(shown, store)))
    except (CorpusLookupError, ValueError) as error:
        print(f"interlingua corpus: {redact_text(str(error))}", file=sys.stderr)
        return 2
    return 0


def _add_root_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        default=None,
        help=f"store root, any fsspec URL (default: ${STATE_DIR_ENV}/corpus or {DEFAULT_STATE_DIR}/corpus)",
    )


def _format_version_list(summaries: Sequence[VersionSummary], root: str) -> str:
    if not summaries:
        return f"no published corpora under {root}"
    rows = [
        [
            summary.name,
            summary.version + (" *" if summary.is_latest else ""),
            summary.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            str(summary.total_rows),
            str(summary.num_shards),
            str(summary.total_rejects),
        ]
        for summary in summaries
    ]
    table = _format_table(["NAME", "VERSION", "CREATED (UTC)", "ROWS", "SHARDS", "REJECTS"], rows)
    return f"{table}\n(* = latest)"


def _format_manifest(manifest: Manifest, store: CorpusStore) -> str:
    latest = " (latest)" if store.latest_version(manifest.name) == manifest.version else ""
    code = manifest.code_version
    commit = f"git {code.git_commit}" if code.git_commit else "no git commit"
    total_bytes = sum(shard.bytes for shard in manifest.shards)
    fields = [
        ("corpus", manifest.name),
        ("version", manifest.version + latest),
        ("created", manifest.created_at.isoformat()),
        ("code", f"interlingua {code.package_version} ({commit})"),
        ("inputs", ", ".join(manifest.inputs) or "none"),
        ("config", f"sha256 {manifest.config_hash[:12]}  {json.dumps(manifest.config, sort_keys=True)}"),
        ("columns", ", ".join(f"{name}: {kind}" for name, kind in manifest.columns.items())),
        ("rows", f"{manifest.total_rows} in {len(manifest.shards)} shards ({total_bytes} bytes)"),
        (
            "rejects",
            f"{manifest.total_rejects}; by reason: {_format_counts(manifest.rejects_by_reason)}; "
            f"by operator: {_format_counts(manifest.rejects_by_operator)}",
        ),
        ("counters", _format_counts(manifest.counters)),
    ]
    header = "\n".join(f"{label:<9} {value}" for label, value in fields)
    shard_rows = [
        [shard.shard_id, str(shard.rows), str(shard.bytes), str(shard.reject_rows), shard.sha256[:16]]
        for shard in manifest.shards
    ]
    return header + "\n\n" + _format_table(["SHARD", "ROWS", "BYTES", "REJECTS", "SHA256"], shard_rows)


def _format_counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{key}={value}" for key, value in counts.items()) or "none"


def _format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows, strict=False)]
    lines = [headers, *rows]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() for line in lines)
