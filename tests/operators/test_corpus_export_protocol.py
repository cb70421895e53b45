"""``export_version`` through the Python API refuses an ``out`` of a protocol fsspec does not know with the one line
the CLI gives: only ``corpus export`` checked it, and the library raised fsspec's bare 'Protocol not known: s4'."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from interlingua.core.errors import UserError
from interlingua.operators.corpus import CorpusStore
from interlingua.operators.corpus.export import export_version


def test_an_export_to_an_unknown_protocol_is_the_one_line_from_the_library_too(tmp_path: Path) -> None:
    store = CorpusStore(str(tmp_path / "store"))
    writer = store.open_version("c", {"a": 1}, ["x"])
    writer.write_shard("s0", pa.table({"id": ["1"]}))
    writer.publish()
    with pytest.raises(UserError, match=r"^unknown protocol 's4' in s4://bucket/out \(hint: did you mean s3://\?"):
        export_version(store, "c", "latest", "s4://bucket/out")
