"""``benchmarks/embed_throughput`` end to end on a tiny encoder and a tiny Bible table (2 CPUs, 1 round)."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interlingua.benchmarks import embed_throughput
from tiny_models import build_tiny_bert


def test_missing_model_is_one_line_with_the_build_hint(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        embed_throughput.main(["--model", str(tmp_path / "nothing"), "--bible", str(tmp_path / "b.parquet")])
    assert exit_info.value.code == 2
    assert "interlingua assets e5-small" in capsys.readouterr().err


@pytest.mark.slow
def test_prints_the_ratio_and_identical_vectors(tmp_path, capsys):
    model = build_tiny_bert(tmp_path / "tiny")
    bible = tmp_path / "bible.parquet"
    pq.write_table(pa.table({"en": [f"the word {i} and the lord" for i in range(40)] + [""],
                             "es": ["x"] * 41}), bible)
    assert embed_throughput.main(["--model", str(model), "--bible", str(bible), "--texts", "30", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "Embed on CPU, 30 texts" in out
    assert "default pool vs 1 actor (speed): " in out
    assert "vectors byte-identical across pools and rounds: True" in out
