"""The metrics-logging benchmark end to end on a fresh sqlite store."""


def test_both_modes_are_timed_on_every_step_but_the_first(capsys):
    from interlingua.benchmarks.metrics_logging import main

    result = main(["--steps", "3", "--step-seconds", "0", "--metrics", "2"])
    assert set(result) == {"synchronous", "asynchronous (the loop)"}
    assert all(0 < r["median_s"] <= r["max_s"] for r in result.values())
    assert "| synchronous |" in capsys.readouterr().out


def test_the_help_description_is_the_whole_first_paragraph(capsys):
    import pytest

    from interlingua.benchmarks.metrics_logging import main

    with pytest.raises(SystemExit):
        main(["--help"])
    assert "synchronous against the\nasynchronous logging the loop uses" in capsys.readouterr().out
