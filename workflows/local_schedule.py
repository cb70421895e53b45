"""Local schedules: run a job on a cron expression in a long-running process (APScheduler).

``run_schedule("0 3 * * *", job)`` blocks and runs ``job()`` at every fire time. A run that is still
going when the next one is due makes that one skip (logged), runs never overlap; every start, end
(exit status, duration) and skip is logged. ``max_runs`` stops after that many finished runs (tests,
one-off catch-ups). Cron: the 5 crontab fields, or 6 with seconds first (``"*/2 * * * * *"``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from interlingua.core.errors import UserError


def cron_trigger(expression: str, tz: Any = timezone.utc):
    """An APScheduler ``CronTrigger`` for a 5-field crontab or a 6-field (seconds first) expression."""
    from apscheduler.triggers.cron import CronTrigger

    fields = expression.split()
    if len(fields) not in (5, 6):
        raise UserError(f"--cron {expression!r} has {len(fields)} fields; give 5 (minute hour day month weekday), "
                        "e.g. \"0 3 * * *\", or 6 with seconds first")
    names = ["minute", "hour", "day", "month", "day_of_week"]
    if len(fields) == 6:
        names = ["second", *names]
    try:
        return CronTrigger(timezone=tz, **dict(zip(names, fields)))
    except ValueError as error:
        raise UserError(f"--cron {expression!r} is not a valid cron expression: {error}") from None


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
