"""Local schedules (`interlingua schedule refresh`): cron firing, no overlapping runs, skips logged, bounded."""

from __future__ import annotations

import argparse
import threading
import time

import pytest

from interlingua.core.errors import UserError
from interlingua.workflows.commands import schedule as schedule_command
from interlingua.workflows.local_schedule import cron_trigger, run_schedule


def test_runs_every_second_never_overlap_and_skips_are_logged() -> None:
    spans: list[tuple[float, float]] = []
    lines: list[str] = []

    def job() -> int:
        start = time.monotonic()
        time.sleep(1.6 if not spans else 0.1)  # the first run outlasts the next fire time
        spans.append((start, time.monotonic()))
        return 0 if len(spans) == 1 else 3

    result: dict = {}
    thread = threading.Thread(daemon=True, target=lambda: result.update(history=run_schedule("* * * * * *", job, max_runs=2,
                                                                                 log=lines.append)))
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive(), "the schedule did not stop after --max-runs"
    history = result["history"]
    runs = [item for item in history if "exit" in item]
    assert [item["exit"] for item in runs] == [0, 3] and len(spans) == 2
    assert spans[1][0] >= spans[0][1]  # the second run started after the first ended
    assert any("skipped" in item for item in history)
    assert any("skipped the run due" in line and "previous run is still going" in line for line in lines)
    assert any(line.startswith("[schedule] run 2 finished: exit 3") for line in lines)


@pytest.mark.parametrize("expression, message", [("0 3 * *", "has 4 fields"), ("61 * * * *", "not a valid cron")])
def test_bad_cron_expressions_are_one_line_errors(expression: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        cron_trigger(expression)


def test_schedule_command_checks_the_spec_before_waiting(tmp_path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("workflow: bitext-corpus\ninputs: [x.tsv]\nconfig: {max_tokens: 0}\n")
    args = argparse.Namespace(schedule_action="refresh", spec=str(spec), cron="0 3 * * *", max_runs=1, log=None,
                              address=None)
    with pytest.raises(UserError, match="max_tokens"):
        schedule_command.run(args)
    spec.write_text("workflow: bitext-corpus\ninputs: [x.tsv]\n")
    with pytest.raises(UserError, match="has 2 fields"):
        schedule_command.run(argparse.Namespace(**{**vars(args), "cron": "0 3"}))
