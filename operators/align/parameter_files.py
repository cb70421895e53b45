"""The files of a saved aligner's parameters folder, checked when it is read back.

A parameters folder (fast_align's tables, eflomal's priors) may be shared or copied by hand, so its contents are
untrusted input: its JSON records the SHA-256 and size of each data file when it is written (``files``), and
:func:`read_recorded` checks a file against that record as it reads it. A damaged, cut-short or swapped file (a
``forward.npz`` copied over ``reverse.npz``, a table from another run) is then a :class:`ParametersError` naming the
folder, the file and what to do, not a link computed from the wrong table or a zip error. A folder written before
the record existed is read unchecked.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

#: the JSON key holding ``{file name: {"sha256": hex, "bytes": size}}``
FILES_KEY = "files"


class ParametersError(ValueError):
    """A parameters folder that cannot be used: missing, damaged, or not what its JSON records."""


def join_path(directory: str, name: str) -> str:
    """``directory/name`` for a local folder or an fsspec URL."""
    return directory.rstrip("/") + "/" + name


def file_records(directory: str, names: list[str]) -> dict[str, dict[str, Any]]:
    """``{name: {"sha256", "bytes"}}`` of the files ``names`` in ``directory`` (for the folder's JSON)."""
    import fsspec

    records = {}
    for name in names:
        with fsspec.open(join_path(directory, name), "rb") as handle:
            data = handle.read()
        records[name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    return records


def read_meta(directory: str, name: str, kind: str) -> dict[str, Any]:
    """The folder's JSON ``name`` as a mapping; :class:`ParametersError` when it is missing or not JSON."""
    import fsspec

    try:
        with fsspec.open(join_path(directory, name), "rb") as handle:
            meta = json.loads(handle.read().decode("utf-8"))
    except FileNotFoundError:
        raise ParametersError(f"{directory} holds no {name}: not a folder of {kind} parameters "
                              "(write one with --save-params)") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ParametersError(f"{join_path(directory, name)} is not valid JSON ({err}): the {kind} parameters there are "
                              "damaged; learn them again (--save-params)") from None
    if not isinstance(meta, dict):
        raise ParametersError(f"{join_path(directory, name)} holds {type(meta).__name__}, not the {kind} parameters' record")
    records = meta.get(FILES_KEY, {})
    if not isinstance(records, dict) or not all(
            isinstance(r, dict) and isinstance(r.get("sha256"), str) and isinstance(r.get("bytes"), int)
            for r in records.values()):
        raise ParametersError(f"{join_path(directory, name)}: {FILES_KEY!r} is not a record of file checksums")
    return meta


def read_recorded(directory: str, name: str, meta: dict[str, Any]) -> bytes:
    """The bytes of file ``name`` of ``directory``, checked against ``meta``'s record of it when there is one."""
    import fsspec

    path = join_path(directory, name)
    try:
        with fsspec.open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise ParametersError(f"{directory} has no {name} (learn the parameters again: --save-params)") from None
    record = meta.get(FILES_KEY, {}).get(name)
    if record is not None and (len(data) != record["bytes"] or hashlib.sha256(data).hexdigest() != record["sha256"]):
        raise ParametersError(f"{path} is not the file its folder's record names ({len(data):,} bytes, SHA-256 "
                              f"{hashlib.sha256(data).hexdigest()[:12]}…; recorded {record['bytes']:,} bytes, "
                              f"{record['sha256'][:12]}…): damaged, or replaced by another run's; learn the "
                              "parameters again (--save-params)")
    return data


def require_positive_number(meta: dict[str, Any], key: str, where: str) -> float:
    """``meta[key]`` when it is a finite number > 0 (not a bool), else :class:`ParametersError`."""
    value = meta.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
        raise ParametersError(f"{where}: {key} must be a finite number > 0, got {value!r} (the file was edited or "
                              "damaged; learn the parameters again with --save-params)")
    return float(value)
