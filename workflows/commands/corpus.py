"""``interlingua corpus``: list, show, compare, pin, prune, export and verify published corpus versions.

    interlingua corpus list [--name NAME] [--root URL]
    interlingua corpus show NAME [--version V] [--json] [--root URL]
    interlingua corpus diff NAME V1 V2 [--json] [--root URL]
    interlingua corpus pin NAME V [--remove] [--root URL]
    interlingua corpus prune NAME --keep N [--dry-run] [--root URL]
    interlingua corpus export NAME [--version V] --out DIR [--format parquet|hf] [--root URL]
    interlingua corpus verify NAME[@VERSION] [--root URL]

The store root defaults to ``<state_dir>/corpus`` where the state dir is ``$INTERLINGUA_HOME``
or ``./.interlingua``; the first publish makes it, so until then it is an empty store, while a ``--root``
that does not exist is refused (a mistyped one), and so is a state dir that does not exist (a mistyped
``INTERLINGUA_HOME``; no ``./.interlingua`` yet: ``list`` says so, exit 0). These commands make no state dir, not even
for their log. Exit status: 0 on success, 2 when the root, corpus or
version does not exist or an option is invalid (the message on stderr names what does exist); 1 when the
store is damaged: a manifest it cannot read (every command), a corpus ``list`` leaves out, a file ``verify``
finds not matching its manifest (each named).

A store may be shared, so what it holds is untrusted: everything these commands print goes through
``core.console.printable`` (control characters such as ESC, C1 and bidirectional overrides escaped), so a manifest's
strings cannot drive the terminal (colours, its title, OSC 52 clipboard writes) or disguise themselves.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from interlingua.operators.corpus import CorpusStore, Manifest, VersionSummary
    from interlingua.operators.corpus.store import FileCheck

HELP = "list, show, diff, pin, prune, export or verify published corpus versions"


def default_corpus_root() -> str:
    """``<state>/corpus`` of the state folder :func:`~interlingua.core.runtime.state_path` names (``$INTERLINGUA_HOME``,
    else ``./.interlingua``), nothing created."""
    from interlingua.core.runtime import corpus_root, state_path

    return corpus_root(state_path())


def log_state_dir(args: argparse.Namespace) -> str | None:
    """The CLI's hook: these commands read the state folder and make none, not even for their log
    (:func:`~interlingua.core.runtime.log_folder_for_reading`)."""
    from interlingua.core.runtime import log_folder_for_reading

    return log_folder_for_reading()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="corpus_action", required=True,
                                    metavar="{list,show,diff,pin,prune,export,verify}")

    list_parser = actions.add_parser("list", help="one line per published version")
    list_parser.add_argument("--name", default=None, help="only the versions of this corpus")
    _add_root_argument(list_parser)

    show_parser = actions.add_parser("show", help="a version's manifest: summary, or JSON with --json")
    show_parser.add_argument("name", help="corpus name")
    show_parser.add_argument("--version", default="latest", help="version id (default: latest)")
    show_parser.add_argument("--json", action="store_true", help="print the full manifest as JSON")
    _add_root_argument(show_parser)

    diff_parser = actions.add_parser("diff", help="what changed between two versions (inputs, shards, counts, lineage)")
    diff_parser.add_argument("name", help="corpus name")
    diff_parser.add_argument("old", help="the older version id (or latest)")
    diff_parser.add_argument("new", help="the newer version id (or latest)")
    diff_parser.add_argument("--json", action="store_true", help="print the difference as JSON")
    _add_root_argument(diff_parser)

    pin_parser = actions.add_parser("pin", help="pin a version: retention never deletes it")
    pin_parser.add_argument("name", help="corpus name")
    pin_parser.add_argument("version", help="version id (or latest)")
    pin_parser.add_argument("--remove", action="store_true", help="unpin instead")
    _add_root_argument(pin_parser)

    prune_parser = actions.add_parser("prune", help="delete old versions, keeping the last N, latest, pinned ones "
                                      "and those registered models were trained on")
    prune_parser.add_argument("name", help="corpus name")
    prune_parser.add_argument("--keep", type=int, required=True, help="how many of the newest versions to keep (>= 1)")
    prune_parser.add_argument("--dry-run", action="store_true", help="only say what would be deleted")
    _add_root_argument(prune_parser)

    export_parser = actions.add_parser("export", help="write a version as a self-contained Parquet dataset or a "
                                       "Hugging Face DatasetDict")
    export_parser.add_argument("name", help="corpus name")
    export_parser.add_argument("--version", default="latest", help="version id (default: latest)")
    export_parser.add_argument("--out", required=True, help="a new folder (any fsspec URL)")
    export_parser.add_argument("--format", choices=("parquet", "hf"), default="parquet",
                               help="parquet: data/ + rejects/ + README.md card (datasets.load_dataset(DIR)); "
                                    "hf: DatasetDict.save_to_disk (datasets.load_from_disk(DIR))")
    _add_root_argument(export_parser)

    verify_parser = actions.add_parser("verify", help="check every file of a version (shards, rejects, artifacts) "
                                       "against the size and SHA-256 its manifest records")
    verify_parser.add_argument("target", metavar="NAME[@VERSION]",
                               help="corpus name, and a version id (default: latest)")
    _add_root_argument(verify_parser)


def _say(text: str) -> None:
    """Print a result: credentials masked, control characters escaped (the line breaks of our own formatting kept;
    those of the store's strings were escaped when formatted, see :func:`_printable_manifest`)."""
    from interlingua.core.console import printable
    from interlingua.core.redact import redact_text

    print(printable(redact_text(text), keep="\n"), flush=True)


def _say_json(text: str) -> None:
    """Print JSON text: credentials masked, control characters in its strings as JSON escapes (still valid JSON)."""
    from interlingua.core.console import printable
    from interlingua.core.redact import redact_text

    print(printable(redact_text(text), keep="\n", json=True))


def _error(message: str) -> None:
    """One line on stderr: credentials masked, every control character (line breaks included) escaped."""
    from interlingua.core.console import printable
    from interlingua.core.redact import redact_text

    print(f"interlingua corpus: error: {printable(redact_text(message))}", file=sys.stderr)


def _printable_manifest(manifest: Manifest) -> Manifest:
    """``manifest`` with control characters escaped in every string it holds (inputs, counters, lineage notes, ...);
    the config is printed as ASCII JSON, which escapes them already."""
    from interlingua.core.console import printable_data
    from interlingua.operators.corpus import Manifest

    escaped = Manifest.model_validate(printable_data(manifest.model_dump(mode="json")))
    return escaped.model_copy(update={"config": manifest.config})


def run(args: argparse.Namespace) -> int:
    from interlingua.core.console import printable_data
    from interlingua.core.redact import redact, redact_text
    from interlingua.core.runtime import missing_state_line, state_origin
    from interlingua.operators.corpus import CorpusLookupError, CorpusStore, CorruptVersionError

    if args.corpus_action == "prune" and args.keep < 1:  # before the store is opened (and its names listed)
        _error(f"--keep must be >= 1 (the newest version always stays), got {args.keep}")
        return 2
    if args.root is not None and not args.root.strip():  # --root "$STORE" with STORE unset: not the default store
        _error("--root is empty: give the store's folder or URL, or leave --root out for the default store")
        return 2
    if args.corpus_action == "export":  # before the store is opened and the version read
        from interlingua.core.url_filesystems import require_known_protocol

        require_known_protocol(args.out)
    if args.root is None and (missing := missing_state_line()) is not None:  # a mistyped INTERLINGUA_HOME, or no
        if args.corpus_action == "list" and state_origin() is None:  # run yet here: nothing published, as before
            _say(missing)
            return 0
        _error(missing)
        return 2
    root = args.root or default_corpus_root()
    if "://" not in root and Path(root).is_file():
        _error(f"--root {redact_text(root)} is a file, not a corpus store folder")
        return 2
    try:
        try:
            store = CorpusStore(root)
        except ImportError as error:  # fsspec names the package its URL scheme needs ("Install s3fs to access S3")
            _error(f"store root {redact_text(root)} needs a package that is not installed: "
                   f"{error} (hint: pip install it into this environment)")
            return 2
        if args.root is not None and store.root_is_missing():  # a mistyped --root (the default root is made by the
            _error(f"--root {redact_text(root)} does not exist (hint: give the store's folder, or leave --root "
                   f"out for the default store, {default_corpus_root()})")  # first publish: missing, it is empty)
            return 2
        if args.corpus_action == "list":
            problems: list[str] = []
            summaries = store.list_versions(args.name, problems)
            _say(_format_version_list(summaries, root, damaged=bool(problems)))
            for problem in problems:
                _error(problem)
            if problems:
                return 1
        elif args.corpus_action == "show":
            manifest = store.manifest(args.name, args.version)
            # a store may be shared and older manifests may hold credentials: never print them
            shown = manifest.model_copy(update={"inputs": tuple(redact(list(manifest.inputs))),
                                                "config": redact(dict(manifest.config))})
            if args.json:
                _say_json(shown.to_json())
            else:
                _say(_format_manifest(_printable_manifest(shown), store))
        elif args.corpus_action == "diff":
            from interlingua.operators.corpus.diff import format_diff, version_diff

            diff = version_diff(store.manifest(args.name, args.old), store.manifest(args.name, args.new))
            if args.json:
                _say_json(json.dumps(redact(diff), indent=2))
            else:
                _say(format_diff(printable_data(redact(diff))))
        elif args.corpus_action == "pin":
            if args.remove:
                version = store.manifest(args.name, args.version).version
                if version not in store.pins(args.name):  # "unpinned" read as if a pin had been taken away
                    _say(f"{args.name}/{version} was not pinned: nothing to remove")
                else:
                    store.unpin(args.name, version)
                    _say(f"unpinned {args.name}/{version}")
            else:
                _say(f"pinned {args.name}/{store.pin(args.name, args.version)}: retention never deletes it")
        elif args.corpus_action == "verify":
            return _verify(store, args.target)
        elif args.corpus_action == "prune":
            from interlingua.workflows.corpus_retention import prune_corpus

            store.manifest(args.name)  # a name that is not published: exit 2 naming those that are
            _say(prune_corpus(store, args.name, args.keep, dry_run=args.dry_run))
        else:
            from interlingua.operators.corpus.export import export_version

            version = export_version(store, args.name, args.version, args.out, args.format)
            _say(f"exported {args.name}/{version} to {args.out} ({args.format})")
    except CorruptVersionError as error:  # a damaged store, not a mistake in the command: 1, as list and verify say it
        _error(str(error))
        return 1
    except (CorpusLookupError, ValueError) as error:
        _error(str(error))
        return 2
    return 0


def _verify(store: CorpusStore, target: str) -> int:
    """``corpus verify``: a line per file that is not ``ok`` (mismatch, unchecked), then a summary; 1 on a mismatch."""
    from interlingua.operators.corpus import LATEST, CorruptVersionError

    name, _, version = target.partition("@")
    checks: list[FileCheck] = []

    def report(check: FileCheck) -> None:
        checks.append(check)
        if check.status != "ok":
            _say(f"{check.status:<9} {check.path} {check.detail}")

    try:
        manifest = store.verify(name, version or LATEST, on_file=report)
    except CorruptVersionError as error:
        bad = [check for check in checks if check.status == "mismatch"]
        if bad:
            _error(f"{name}@{version or LATEST}: {len(bad)} of the {len(checks)} files "
                   f"{'does' if len(bad) == 1 else 'do'} not match its manifest "
                   f"(named above): the published version was altered")
        else:  # the manifest itself
            _error(str(error))
        return 1
    unchecked = sum(check.status == "unchecked" for check in checks)
    matched = len(checks) - unchecked
    _say(f"{manifest.name}@{manifest.version}: {matched} {'file matches' if matched == 1 else 'files match'} its "
         "manifest (size and SHA-256)"
         + (f"; {unchecked} unchecked (no SHA-256 recorded)" if unchecked else ""))
    return 0


def _add_root_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        default=None,
        help="store root, any fsspec URL (default: $INTERLINGUA_HOME/corpus or .interlingua/corpus)",
    )


def _format_version_list(summaries: Sequence[VersionSummary], root: str, *, damaged: bool = False) -> str:
    """The table of ``summaries``; ``damaged``: versions were left out (named on stderr), so an empty list is not
    an empty store."""
    if not summaries:
        return f"no readable published versions under {root}" if damaged else f"no published corpora under {root}"
    rows = [
        [
            summary.name,
            summary.version + (" *" if summary.is_latest else "") + (" !" if summary.partial else ""),
            summary.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            str(summary.total_rows),
            str(summary.num_shards),
            str(summary.total_rejects),
        ]
        for summary in summaries
    ]
    table = _format_table(["NAME", "VERSION", "CREATED (UTC)", "ROWS", "SHARDS", "REJECTS"], rows)
    partial = "; ! = partial: built from inputs read only in part (corpus show names them)"
    return f"{table}\n(* = latest{partial if any(summary.partial for summary in summaries) else ''})"


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
        *([("partial", manifest.partial_note())] if manifest.partial else []),
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
    if manifest.lineage is not None:
        lineage = manifest.lineage
        fields.append(("lineage", f"{lineage.mode} from {lineage.parent or '-'}: +{len(lineage.inputs_added)} "
                                  f"~{len(lineage.inputs_changed)} -{len(lineage.inputs_removed)} inputs, "
                                  f"{lineage.shards_reused} shards reused, {lineage.shards_written} written"))
    header = "\n".join(f"{label:<9} {value}" for label, value in fields)
    shard_rows = [
        [shard.shard_id, str(shard.rows), str(shard.bytes), str(shard.reject_rows), shard.sha256[:16],
         shard.reused_from or "-"]
        for shard in manifest.shards
    ]
    return header + "\n\n" + _format_table(["SHARD", "ROWS", "BYTES", "REJECTS", "SHA256", "REUSED FROM"], shard_rows)


def _format_counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{key}={value}" for key, value in counts.items()) or "none"


def _format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows, strict=False)]
    lines = [headers, *rows]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() for line in lines)
