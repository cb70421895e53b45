"""Local schedules (`interlingua schedule refresh`): cron firing, no overlapping runs, skips logged, bounded;
crontab(5) semantics (weekday 0/7 = Sunday, day-of-month OR weekday), a result line per run."""

from __future__ import annotations

import argparse
import json
import subprocess
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from interlingua.core.errors import UserError
from interlingua.workflows.commands import schedule as schedule_command
from interlingua.workflows.local_schedule import cron_trigger, cron_weekdays, run_schedule
from ports import closed_port


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


# -- crontab semantics: next fire times against a calendar worked out by hand -----------------------------
# January 2025: Wed 1, Thu 2, Fri 3, Sat 4, Sun 5, Mon 6, Tue 7, Wed 8, ..., Mon 13, Fri 17.

WED_JAN_1 = datetime(2025, 1, 1, 0, 0, 30, tzinfo=timezone.utc)


def fire_times(expression: str, start: datetime, count: int) -> list[str]:
    """The first ``count`` fire times after ``start``, as the scheduler asks for them (each after the previous)."""
    trigger = cron_trigger(expression, now=start)
    times, previous, now = [], None, start
    for _ in range(count):
        previous = now = trigger.get_next_fire_time(previous, now)
        times.append(now.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S"))
    return times


@pytest.mark.parametrize("expression, start, expected", [
    ("0 0 * * 1", WED_JAN_1, ["2025-01-06", "2025-01-13", "2025-01-20"]),  # 1 = Monday
    ("0 0 * * 0", WED_JAN_1, ["2025-01-05", "2025-01-12", "2025-01-19"]),  # 0 = Sunday
    ("0 0 * * 7", WED_JAN_1, ["2025-01-05", "2025-01-12", "2025-01-19"]),  # 7 = Sunday too
    ("0 0 * * 1-5", WED_JAN_1, ["2025-01-02", "2025-01-03", "2025-01-06", "2025-01-07"]),  # Wed 00:00 has passed
    ("0 0 * * MON-FRI", WED_JAN_1, ["2025-01-02", "2025-01-03", "2025-01-06", "2025-01-07"]),
    ("0 0 * * 5-7", WED_JAN_1, ["2025-01-03", "2025-01-04", "2025-01-05", "2025-01-10"]),  # Fri, Sat, Sun
    ("0 0 * * 1,3,5", WED_JAN_1, ["2025-01-03", "2025-01-06", "2025-01-08"]),
    ("0 0 * * */2", WED_JAN_1, ["2025-01-02", "2025-01-04", "2025-01-05", "2025-01-07"]),  # 0,2,4,6: Sun Tue Thu Sat
    ("0 0 * * sun", WED_JAN_1, ["2025-01-05", "2025-01-12"]),
    # both day fields restricted: every Friday OR the 13th (Mon 13 January)
    ("0 0 13 * 5", WED_JAN_1, ["2025-01-03", "2025-01-10", "2025-01-13", "2025-01-17"]),
    # ... so an impossible date still fires on the weekday: the Mondays of February
    ("0 0 31 2 1", WED_JAN_1, ["2025-02-03", "2025-02-10", "2025-02-17", "2025-02-24", "2026-02-02"]),
    # a day field starting with "*" does not restrict (Vixie cron): the 1st/11th/21st/31st that are Mondays
    # (Mar 31, Apr 21; none in May or June; Jul 21)
    ("0 0 */10 * 1", WED_JAN_1, ["2025-03-31", "2025-04-21", "2025-07-21"]),
    ("*/15 * * * *", WED_JAN_1, ["2025-01-01 00:15", "2025-01-01 00:30", "2025-01-01 00:45", "2025-01-01 01:00"]),
    ("30 2 1,15 * *", WED_JAN_1, ["2025-01-01 02:30", "2025-01-15 02:30", "2025-02-01 02:30"]),
    ("0 9 * JAN-MAR MON", WED_JAN_1, ["2025-01-06 09:00", "2025-01-13 09:00"]),
    # Mondays of March 2025: 3, 10, 17, 24, 31; then January 2026 (Thu 1, so Mon 5)
    ("0 9 * JAN-MAR MON", datetime(2025, 3, 25, tzinfo=timezone.utc), ["2025-03-31 09:00", "2026-01-05 09:00",
                                                                        "2026-01-12 09:00"]),
    ("0 0 29 2 *", WED_JAN_1, ["2028-02-29", "2032-02-29"]),  # leap days only
    ("*/20 * * * * *", WED_JAN_1, ["2025-01-01 00:00:40", "2025-01-01 00:01:00", "2025-01-01 00:01:20"]),  # seconds
])
def test_cron_fires_when_crontab_would(expression: str, start: datetime, expected: list[str]) -> None:
    assert fire_times(expression, start, len(expected)) == [to_the_second(value) for value in expected]


def to_the_second(value: str) -> str:
    """The table's shorthand in full: ``2025-01-06`` -> ``2025-01-06 00:00:00``, ``... 00:15`` -> ``... 00:15:00``."""
    return value + " 00:00:00"[len(value) - 10:]


@pytest.mark.parametrize("field, names", [
    ("*", "*"), ("0", "sun"), ("7", "sun"), ("0,7", "sun"), ("1-5", "mon,tue,wed,thu,fri"),
    ("5-7", "fri,sat,sun"), ("*/2", "tue,thu,sat,sun"), ("1,3,5", "mon,wed,fri"),
    ("0-7", "mon,tue,wed,thu,fri,sat,sun"),
    ("MON-FRI/2", "mon,wed,fri"), ("Sun,Sat", "sat,sun"), ("1-6/3", "mon,thu"),
])
def test_cron_weekdays_become_apscheduler_names(field: str, names: str) -> None:
    assert cron_weekdays(field) == names


@pytest.mark.parametrize("expression, message", [
    ("0 0 * * 8", "'8' is not a weekday"), ("0 0 * * 7-1", "runs high to low"), ("0 0 * * 1-5/0", "step of 0"),
    ("0 0 * * 5/2", "cannot read '5/2'"), ("0 0 * * funday", "not a weekday"), ("0 0 * * 1,", "cannot read ''"),
])
def test_bad_weekday_fields_are_one_line_errors(expression: str, message: str) -> None:
    with pytest.raises(UserError, match=message) as error:
        cron_trigger(expression)
    assert "\n" not in str(error.value) and "0 and 7 = Sunday" in str(error.value)


@pytest.mark.parametrize("expression", ["0 0 31 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 0 31 2 *"])
def test_a_cron_that_never_fires_is_refused(expression: str) -> None:
    with pytest.raises(UserError, match="never fires") as error:
        cron_trigger(expression)
    assert "\n" not in str(error.value)


def schedule_args(tmp_path: Path, **overrides) -> argparse.Namespace:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"workflow: bitext-corpus\ninputs: [{tmp_path}/in/*.tsv]\n"
                    f"config: {{corpus_name: bt, store_root: {tmp_path}/store, src_lang: en, tgt_lang: de}}\n")
    values = {"schedule_action": "refresh", "spec": str(spec), "cron": "* * * * * *", "max_runs": 1,
              "log": str(tmp_path / "logs" / "schedule.log"), "address": None} | overrides
    return argparse.Namespace(**values)


def test_schedule_command_refuses_a_never_firing_cron_before_starting(tmp_path: Path) -> None:
    args = schedule_args(tmp_path, cron="0 0 31 2 *")
    with pytest.raises(UserError, match="never fires"):
        schedule_command.run(args)
    assert not Path(args.log).exists()


def test_schedule_command_checks_the_address_before_waiting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    port = closed_port()
    args = schedule_args(tmp_path, cron="0 3 * * *", address=f"127.0.0.1:{port}")
    with pytest.raises(UserError, match="cannot reach a Ray cluster"):
        schedule_command.run(args)
    with pytest.raises(UserError, match="expected HOST:PORT"):
        schedule_command.run(argparse.Namespace(**{**vars(args), "address": "just-a-host"}))
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")  # the child would use it: checked as well
    with pytest.raises(UserError, match="cannot reach a Ray cluster"):
        schedule_command.run(argparse.Namespace(**{**vars(args), "address": None}))
    assert not Path(args.log).exists()


FOOTER = "[interlingua] full log: /state/logs/refresh-20250101-000000-1.log\n"


def json_stdout(summary: dict) -> str:
    """What ``interlingua refresh --json`` prints: its progress lines, then the indented summary."""
    return "refresh bt: 1 input(s) added\npublished bt/v2 ...\n" + json.dumps(summary, indent=2) + "\n"


@pytest.mark.parametrize("code, stdout, stderr, line", [
    (0, json_stdout({"corpus": "bt", "published": True, "version": "v2", "mode": "incremental", "rows": 40,
                     "shards_reused": 3, "retention": {"kept": ["v1"]}}), FOOTER,
     "refresh published bt/v2 (incremental, 40 rows, 3 shard(s) reused)"),
    (0, json_stdout({"corpus": "bt", "published": False, "version": "v1", "mode": "unchanged"}), FOOTER,
     "refresh: nothing new; bt stays at v1"),
    (2, "", "interlingua refresh: error: inputs /x/*.tsv matches no file (hint: ...)\n",
     "refresh failed (exit 2): inputs /x/*.tsv matches no file (hint: ...)"),
    (1, "refresh bt: 2 input(s) added\n", "interlingua refresh: failed: RuntimeError: disk full\n"
     "  (the traceback is in /state/logs/r.log; --verbose shows it here)\n",
     "refresh failed (exit 1): RuntimeError: disk full"),
    (-9, "refresh bt: 2 input(s) added\n", "", "refresh failed (exit -9): refresh bt: 2 input(s) added"),
    (0, "", FOOTER, "refresh finished (exit 0; no summary printed)"),
])
def test_refresh_outcome_says_what_the_refresh_did(code: int, stdout: str, stderr: str, line: str) -> None:
    assert schedule_command.refresh_outcome(code, stdout, stderr) == line


def test_each_run_logs_the_refresh_result_not_the_cli_footer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture) -> None:
    calls: list[list[str]] = []

    def child(command, **kwargs):
        calls.append(command)
        stdout = json_stdout({"corpus": "bt", "published": False, "version": "v1", "mode": "unchanged"})
        return subprocess.CompletedProcess(command, 0, stdout, FOOTER)

    monkeypatch.setattr(subprocess, "run", child)
    args = schedule_args(tmp_path)
    assert schedule_command.run(args) == 0
    assert len(calls) == 1 and calls[0][-3:] == ["refresh", args.spec, "--json"]
    logged = Path(args.log).read_text().splitlines()
    printed = capsys.readouterr().out.splitlines()
    for lines in (logged, printed):
        result = [line for line in lines if line.startswith("[schedule]   ")]
        assert result == ["[schedule]   refresh: nothing new; bt stays at v1"]
    assert not any(line.startswith("[schedule]") and "full log" in line for line in logged + printed)


@pytest.mark.slow
def test_scheduled_refresh_child_reports_nothing_new_then_a_failure(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The real ``interlingua refresh --json`` child: nothing new over a version it already made, then its one-line
    error once the inputs are gone (no Ray: both stop before any build)."""
    from interlingua.operators.corpus import CorpusStore
    from interlingua.workflows.refresh import load_spec, refresh

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.tsv").write_text("the house\tdas haus\n")
    args = schedule_args(tmp_path)
    made = _publish_as_refresh(load_spec(args.spec))
    refresh(load_spec(args.spec), log=lambda line: None)  # sanity: the reference says nothing new
    assert CorpusStore(str(tmp_path / "store")).versions("bt") == [made]

    assert schedule_command.run(args) == 0
    (tmp_path / "in" / "a.tsv").unlink()
    assert schedule_command.run(args) == 1
    results = [line for line in Path(args.log).read_text().splitlines() if line.startswith("[schedule]   ")]
    assert results[0] == f"[schedule]   refresh: nothing new; bt stays at {made}"
    assert results[1].startswith("[schedule]   refresh failed (exit 2): ") and "matches no file" in results[1]


def _publish_as_refresh(spec) -> str:
    """A version that looks as if a refresh made it from the spec's inputs (no build, no Ray); its id."""
    import pyarrow as pa

    from interlingua.operators.corpus import CorpusStore, Lineage
    from interlingua.operators.corpus.input_fingerprints import fingerprint, list_inputs
    from interlingua.operators.corpus.manifest import config_hash
    from interlingua.workflows.refresh import _ADAPTERS

    adapter = _ADAPTERS[spec.workflow]
    config = adapter.validate(spec)
    spec_config = adapter.spec_config(config)
    urls = list_inputs(spec.inputs)
    writer = CorpusStore(config.store_root).open_version(
        "bt", spec_config, urls, input_fingerprints={u: fingerprint(u, content=True) for u in urls},
        lineage=Lineage(spec_config_hash=config_hash(spec_config)))
    for k, url in enumerate(urls):
        writer.write_shard(f"s{k}", pa.table({"id": ["1"]}), input=url)
    return writer.publish().version
