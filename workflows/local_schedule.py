"""Local schedules: run a job on a cron expression in a long-running process (APScheduler).

``run_schedule("0 3 * * *", job)`` blocks and runs ``job()`` at every fire time. A run that is still
going when the next one is due makes that one skip (logged), runs never overlap; every start, end
(exit status, duration) and skip is logged. ``max_runs`` stops after that many finished runs (tests,
one-off catch-ups). Cron: the 5 crontab fields, or 6 with seconds first (``"*/2 * * * * *"``).

The fields mean what they mean in crontab(5) (Vixie cron), not APScheduler's own dialect: weekday 0 and 7
are Sunday, 1 Monday (APScheduler counts 0 = Monday), and when both the day of month and the weekday are
restricted (neither field starts with ``*``) a day matching EITHER fires (APScheduler requires both).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from interlingua.core.errors import UserError

#: crontab weekday names in cron's numbering (0 = Sunday; 7 is Sunday again)
_CRON_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
#: one item of a crontab list: ``*``, ``N`` or ``N-M``, then an optional ``/STEP`` (not after a single ``N``)
_WEEKDAY_ITEM = re.compile(r"(?:(?P<star>\*)|(?P<first>[0-9a-z]+)(?:-(?P<last>[0-9a-z]+))?)(?:/(?P<step>\d+))?",
                           re.IGNORECASE)


def cron_trigger(expression: str, tz: Any = timezone.utc, *, now: datetime | None = None):
    """An APScheduler trigger firing when crontab would for a 5-field (or 6-field, seconds first) expression.

    Refuses, as a one-line error, an expression with no fire time after ``now`` (``0 0 31 2 *``), so the
    schedule fails before it starts rather than when the scheduler finds nothing to wait for."""
    fields = expression.split()
    if len(fields) not in (5, 6):
        raise UserError(f"--cron {expression!r} has {len(fields)} fields; give 5 (minute hour day month weekday), "
                        "e.g. \"0 3 * * *\", or 6 with seconds first")
    names = ["minute", "hour", "day", "month", "day_of_week"]
    if len(fields) == 6:
        names = ["second", *names]
    values = dict(zip(names, fields))
    day, weekday = values["day"], values["day_of_week"]
    values["day_of_week"] = cron_weekdays(weekday, expression)
    if day.startswith("*") or weekday.startswith("*"):  # crontab: either day field unrestricted -> both must match
        trigger = _cron(expression, tz, values)
    else:  # both restricted: crontab fires on a day matching either field
        from apscheduler.triggers.combining import OrTrigger

        trigger = OrTrigger([_cron(expression, tz, {**values, "day_of_week": "*"}),
                             _cron(expression, tz, {**values, "day": "*"})])
    if trigger.get_next_fire_time(None, now or datetime.now(timezone.utc)) is None:
        raise UserError(f"--cron {expression!r} never fires (no such date, e.g. 31 February); "
                        "check the day and month fields")
    return trigger


def _cron(expression: str, tz: Any, values: dict[str, str]):
    """One APScheduler ``CronTrigger`` (weekday already in APScheduler's names); its complaints as a UserError."""
    from apscheduler.triggers.cron import CronTrigger

    try:
        return CronTrigger(timezone=tz, **values)
    except ValueError as error:
        raise UserError(f"--cron {expression!r} is not a valid cron expression: {error}") from None


def cron_weekdays(field: str, expression: str = "") -> str:
    """A crontab weekday field (``1-5``, ``*/2``, ``1,3,5``, ``5-7``, ``MON-FRI``) as APScheduler's weekday names.

    Why: APScheduler numbers weekdays from 0 = Monday and has no 7, crontab from 0 = Sunday with 7 = Sunday
    too; names mean the same in both, so the field is expanded to the set of days and written as names."""
    if field == "*":
        return "*"
    where = expression or field
    days: set[int] = set()
    for item in field.split(","):
        match = _WEEKDAY_ITEM.fullmatch(item)
        if not match or (match["step"] and not match["star"] and not match["last"]):
            raise _bad_weekday(where, f"cannot read {item!r}")
        if match["star"]:
            first, last = 0, 7
        else:
            first = _weekday_number(match["first"], where)
            last = _weekday_number(match["last"] or match["first"], where)
        step = int(match["step"] or 1)
        if first > last or step == 0:
            raise _bad_weekday(where, f"{item!r} " + ("has a step of 0" if step == 0 else "runs high to low"))
        days.update(number % 7 for number in range(first, last + 1, step))
    monday_first = sorted(days, key=lambda number: (number - 1) % 7)
    return ",".join(_CRON_WEEKDAYS[number] for number in monday_first)


def _weekday_number(token: str, expression: str) -> int:
    """A crontab weekday number (0-7) or three-letter name as cron's number (Sunday = 0)."""
    if token.isdigit() and int(token) <= 7:
        return int(token)
    if token.lower() in _CRON_WEEKDAYS:
        return _CRON_WEEKDAYS.index(token.lower())
    raise _bad_weekday(expression, f"{token!r} is not a weekday")


def _bad_weekday(expression: str, why: str) -> UserError:
    """The one-line error for a weekday field crontab would not read, with what it does read."""
    return UserError(f"--cron {expression!r}: weekday field: {why}; use 0-7 (0 and 7 = Sunday) or SUN-SAT, "
                     "as ranges low to high, lists and steps (1-5, 1,3,5, */2, 5-7)")


def run_schedule(expression: str, job: Callable[[], int], *, max_runs: int | None = None,
                 log: Callable[[str], None] = print) -> list[dict[str, Any]]:
    """Run ``job`` on the schedule until interrupted or ``max_runs`` runs finished; returns the runs
    (``started``, ``seconds``, ``exit``) and skips (``skipped``: the due time)."""
    from apscheduler.events import EVENT_JOB_MAX_INSTANCES
    from apscheduler.executors.pool import ThreadPoolExecutor
    from apscheduler.schedulers.background import BackgroundScheduler

    logging.getLogger("apscheduler").setLevel(logging.ERROR)  # its skip warnings are ours, in our words
    trigger = cron_trigger(expression)
    history: list[dict[str, Any]] = []
    finished = threading.Event()
    lock = threading.Lock()

    def one_run() -> None:
        started = datetime.now(timezone.utc)
        number = sum(1 for item in history if "exit" in item or "running" in item) + 1
        entry: dict[str, Any] = {"run": number, "started": started.isoformat(timespec="seconds"), "running": True}
        with lock:
            history.append(entry)
        log(f"[schedule] run {number} started {entry['started']}")
        clock = time.monotonic()
        try:
            code = job()
        except Exception as error:  # noqa: BLE001 - a failed run is logged and the schedule goes on
            code = 1
            log(f"[schedule] run {number} failed: {type(error).__name__}: {error}")
        entry.update({"seconds": round(time.monotonic() - clock, 2), "exit": code})
        entry.pop("running")
        log(f"[schedule] run {number} finished: exit {code} after {entry['seconds']} s")
        if max_runs is not None and sum(1 for item in history if "exit" in item) >= max_runs:
            finished.set()

    def skipped(event) -> None:
        due = event.scheduled_run_times[0] if event.scheduled_run_times else datetime.now(timezone.utc)
        with lock:
            history.append({"skipped": due.isoformat(timespec="seconds")})
        log(f"[schedule] skipped the run due {due.isoformat(timespec='seconds')}: the previous run is still going")

    scheduler = BackgroundScheduler(executors={"default": ThreadPoolExecutor(1)}, timezone=timezone.utc)
    scheduler.add_listener(skipped, EVENT_JOB_MAX_INSTANCES)
    job_ref = scheduler.add_job(one_run, trigger, max_instances=1, coalesce=True, misfire_grace_time=None,
                                id="scheduled-job")
    scheduler.start()
    log(f"[schedule] cron {expression!r}; next run {job_ref.next_run_time.isoformat(timespec='seconds')}"
        + (f"; stopping after {max_runs} run(s)" if max_runs else "; Ctrl-C stops"))
    try:
        while not finished.wait(0.2):
            pass
    except KeyboardInterrupt:
        log("[schedule] interrupted; waiting for a running job to finish")
    finally:
        scheduler.shutdown(wait=True)
    return history
