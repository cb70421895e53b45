"""Every benchmark's plain mistakes (a missing input file, a missing asset, a count below 1) are one line and exit 2,
before any work (``benchmarks/arguments.py``)."""

import importlib

import pytest


def _one_line_error(capsys, module: str, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        importlib.import_module(f"interlingua.benchmarks.{module}").main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize("module, argv, named", [
    ("align_throughput", ["--src", "missing.en", "--tgt", "missing.es", "--params", "p"], "--src: no file missing.en"),
    ("align_learning", ["--src", "missing.en", "--tgt", "missing.es"], "--src: no file missing.en"),
    ("wiki_extract_throughput", ["--dump", "missing.xml.bz2"], "--dump: no file missing.xml.bz2"),
    ("wiki_extract_throughput", ["--repeat", "0"], "--repeat: expected a positive integer, got '0'"),
    ("embed_startup", ["--rounds", "0"], "--rounds: expected a positive integer, got '0'"),
    ("workers_scaling", ["--steps", "x"], "--steps"),
    # two steps are warm-up, dropped from the timing: with fewer than 3 nothing was left, found after every run
    ("objective_throughput", ["--steps", "2"], "--steps: expected an integer of at least 3 (the first 2 are warm-up"),
])
def test_a_plain_mistake_is_one_line_and_exit_2(capsys, tmp_path, monkeypatch, module, argv, named):
    monkeypatch.chdir(tmp_path)
    assert named in _one_line_error(capsys, module, argv)


@pytest.mark.parametrize("module, asset", [("objective_throughput", "bible"), ("embed_throughput", "e5-small"),
                                           ("embed_startup", "e5-small")])
def test_a_missing_asset_names_the_path_looked_at_and_the_command_that_builds_it(capsys, tmp_path, monkeypatch,
                                                                                  module, asset):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("INTERLINGUA_HOME", raising=False)
    err = _one_line_error(capsys, module, [])
    assert str(tmp_path / ".interlingua" / "assets" / asset) in err
    assert f"`interlingua assets {asset}`" in err and "INTERLINGUA_HOME" in err


def test_the_bible_is_looked_for_under_interlingua_home(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    err = _one_line_error(capsys, "objective_throughput", ["--rounds", "1"])
    assert str(tmp_path / "home" / "assets" / "bible" / "bible-en-es.parquet") in err


def test_a_bible_named_with_the_option_is_checked(capsys, tmp_path):
    err = _one_line_error(capsys, "objective_throughput", ["--bible", str(tmp_path / "b.parquet")])
    assert f"--bible: {tmp_path / 'b.parquet'} not found" in err


def test_align_throughput_checks_the_tables_plain_fast_align_opens(capsys, tmp_path, monkeypatch):
    """--params was opened unchecked by systran_align after the bitext was read: a RuntimeError traceback."""
    monkeypatch.chdir(tmp_path)
    for name in ("s.txt", "t.txt", "p/forward.bin"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("a\n")
    err = _one_line_error(capsys, "align_throughput", ["--src", "s.txt", "--tgt", "t.txt", "--params", "p"])
    assert "--params: no file p/reverse.bin" in err
