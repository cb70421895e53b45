"""``corpus export --format hf``: datasets' progress bars stay off the console unless --verbose; the export loads."""

from __future__ import annotations

import datasets
import pyarrow as pa

from interlingua.operators.corpus import CorpusStore
from interlingua.workflows.cli import main


def test_hf_export_shows_no_datasets_progress_bars_unless_verbose(tmp_path, monkeypatch, capsys):
    """"Saving the dataset (1/1 shards)" bars were printed on the console, where the README says library chatter
    is off by default."""
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    store = CorpusStore(str(tmp_path / "store"))
    writer = store.open_version("c", {"a": 1}, ["x"])
    writer.write_shard("s0", pa.table({"id": ["1", "2"]}))
    version = writer.publish().version
    export = ["corpus", "export", "c", "--root", str(tmp_path / "store"), "--format", "hf"]

    assert main([*export, "--out", str(tmp_path / "quiet")]) == 0
    captured = capsys.readouterr()
    assert "Saving the dataset" not in captured.err + captured.out
    assert captured.out.strip() == f"exported c/{version} to {tmp_path / 'quiet'} (hf)"
    assert not datasets.are_progress_bars_disabled()  # taken back after the export

    assert main([*export, "--out", str(tmp_path / "verbose"), "-v"]) == 0
    assert "Saving the dataset" in capsys.readouterr().err


def test_an_hf_export_with_no_rejects_loads(tmp_path, monkeypatch):
    """A version without rejects exported as hf could not be read back: datasets saved its empty rejects split
    with no data file, and datasets.load_from_disk failed with an IndexError."""
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    store = CorpusStore(str(tmp_path / "store"))
    writer = store.open_version("c", {"a": 1}, ["x"])
    writer.write_shard("s0", pa.table({"id": ["1", "2"]}))
    writer.publish()
    assert main(["corpus", "export", "c", "--root", str(tmp_path / "store"), "--format", "hf",
                 "--out", str(tmp_path / "out")]) == 0
    loaded = datasets.load_from_disk(str(tmp_path / "out"))
    assert loaded["train"]["id"] == ["1", "2"] and loaded["rejects"].num_rows == 0
