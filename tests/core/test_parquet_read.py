"""core.parquet_read: pyarrow is handed Arrow-owned memory, never a Python object it could release at exit."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interlingua.core import parquet_read
from interlingua.core.parquet_read import read_parquet

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def parquet(tmp_path):
    table = pa.table({"id": [str(i) for i in range(300)], "src": [f"hello {i}" for i in range(300)],
                      "tgt": [f"hola {i}" for i in range(300)]})
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=100)
    return table, path


def test_bytes_file_objects_and_paths_read_the_same_table(parquet):
    table, path = parquet
    data = path.read_bytes()
    assert read_parquet(data).equals(table)
    assert read_parquet(bytearray(data), ["tgt"]).equals(table.select(["tgt"]))
    with open(path, "rb") as handle:
        assert read_parquet(handle, ["id", "src"]).equals(table.select(["id", "src"]))
    assert read_parquet(str(path)).equals(table)


def test_pyarrow_gets_a_copy_in_arrow_memory_not_the_python_object(parquet, monkeypatch):
    """The bytes (or the file object) are not what pyarrow reads from: a copy it allocated is."""
    _, path = parquet
    data = path.read_bytes()
    given = []
    real = pa.BufferReader
    monkeypatch.setattr(parquet_read.pa, "BufferReader", lambda buf: given.append(buf) or real(buf))
    read_parquet(data)
    with open(path, "rb") as handle:
        read_parquet(handle)
    assert len(given) == 2
    for buf in given:
        assert isinstance(buf, pa.Buffer) and buf.to_pybytes() == data
        assert buf.address != pa.py_buffer(data).address


def test_no_reader_hands_pyarrow_python_memory_or_a_file_object():
    """Outside core/parquet_read.py, no ``pa.BufferReader(...)`` and no ``pq.read_table`` of something other than a
    path-like name (a string, a Path or a variable named ``path``/``bible``/...)."""
    offenders = []
    for file in ROOT.rglob("*.py"):
        rel = file.relative_to(ROOT)
        if rel.parts[0] in ("tests", ".venv", "benchmarks") or rel == Path("core/parquet_read.py"):
            continue
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                name = node.func.attr
                if name == "BufferReader":
                    offenders.append(f"{rel}:{node.lineno} BufferReader")
                if name == "read_table" and isinstance(node.func.value, ast.Name) and node.func.value.id == "pq" \
                        and node.args and isinstance(node.args[0], ast.Name) \
                        and node.args[0].id in ("handle", "fh", "f", "stream", "data", "buf"):
                    offenders.append(f"{rel}:{node.lineno} pq.read_table({node.args[0].id})")
    assert offenders == []
