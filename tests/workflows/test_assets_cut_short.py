"""An asset build cut short never leaves a file or folder that later runs take for the asset (each asset is
skipped when present): Parquet rows are written beside the asset and renamed into place, the e5-small folder is
built beside its place and renamed, and a folder lacking the file the encoder's save writes last is rebuilt."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from interlingua.workflows.assets.rows_file import write_rows


def test_rows_are_written_whole_or_not_at_all(tmp_path, monkeypatch):
    path = tmp_path / "pairs.parquet"
    write_rows([{"en": "a", "es": "b"}, {"en": "c", "es": "d"}], ("en", "es"), path)
    assert pq.read_table(path).to_pydict() == {"en": ["a", "c"], "es": ["b", "d"]}

    def cut_short(table, where):
        with open(where, "wb") as handle:
            handle.write(b"PAR1 half a file")
        raise KeyboardInterrupt

    monkeypatch.setattr(pq, "write_table", cut_short)
    with pytest.raises(KeyboardInterrupt):
        write_rows([{"en": "x", "es": "y"}], ("en", "es"), tmp_path / "other.parquet")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.parquet"]  # no asset file, no partial one
    with pytest.raises(KeyboardInterrupt):
        write_rows([{"en": "x", "es": "y"}], ("en", "es"), path)
    assert pq.read_table(path).to_pydict() == {"en": ["a", "c"], "es": ["b", "d"]}  # the old file stays whole


@pytest.mark.slow
def test_an_e5_folder_left_incomplete_is_built_again(tmp_path):
    from interlingua.models.identity import files_digest
    from interlingua.models.sentence_encoder import ENCODER_CONFIG
    from interlingua.workflows.assets.build import build_assets, e5_model_dir

    assets = tmp_path / "assets"
    first = build_assets(assets, only=("e5-small",))
    target = e5_model_dir(assets)
    assert first.built["e5-small"] == str(target) and [p.name for p in assets.iterdir() if "partial" in p.name] == []
    digest = files_digest(target)
    (target / ENCODER_CONFIG).unlink()  # as a build cut short after modules.json left it
    (target / "model.safetensors").write_bytes(b"truncated")
    again = build_assets(assets, only=("e5-small",))
    assert again.built["e5-small"] == str(target) and files_digest(target) == digest
    assert build_assets(assets, only=("e5-small",)).skipped["e5-small"] == str(target)
