"""``gradcache_memory`` stopped by SIGTERM (``timeout``'s) while a forked trial runs: the trial's child is stopped
too, and nothing prints a traceback (the child wrote to a closed pipe: BrokenPipeError).

The SIGTERM is sent once the driver is seen waiting in its read of a trial's result, the trial held stopped
(SIGSTOP) so that it cannot end first: sent as soon as a trial child appeared, it landed, on a loaded machine, while
the driver was still forking that child (in an at-fork callback, where the handler's SystemExit is printed as
"Exception ignored" and lost: the driver searched on, and the test timed out waiting for it to end)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SMALL = ["--quick", "--hidden", "32", "--layers", "1", "--seq-len", "8", "--vocab", "300", "--threads", "1",
         "--cap-mib", "4096"]  # a search that grows the batch for minutes: the trials held are the search's


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _state(pid: int) -> str | None:
    """The process's state letter (``S`` sleeping, ``T`` stopped, ``Z`` ended, ...), None when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return None


def _alive(pid: int) -> bool:
    return _state(pid) not in (None, "Z")


def _wait_channel(pid: int) -> str:
    """Where in the kernel the process sleeps (``anon_pipe_read``, ``pipe_read``, ``do_wait``; ``0`` running)."""
    try:
        return Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return ""


def _held(child: int) -> bool:
    """Stop the trial ``child`` (SIGSTOP): True once it is stopped, False when it ended first."""
    try:
        os.kill(child, signal.SIGSTOP)
    except ProcessLookupError:
        return False
    while (state := _state(child)) not in ("T", None, "Z"):  # an exiting trial never stops: it ends
        time.sleep(0.001)  # not a busy loop: on 2 cores it would slow the processes it waits for
    return state == "T"


def _settled_wait_channel(driver: int) -> str:
    """Where the driver sleeps once its trial is held: reading the trial's result (``...pipe...``), or waiting for
    the trial to exit (``do_wait``) when it had written its result already; "" when the driver ended."""
    while _alive(driver):
        channel = _wait_channel(driver)
        if "pipe" in channel or "wait" in channel:
            return channel
        if channel == "0" and _state(driver) == "S" and _wait_channel(driver) == "0":
            pytest.skip("this kernel does not name where a process sleeps (/proc/PID/wchan reads 0)")
        time.sleep(0.001)
    return ""


def _trial_held_in_its_read(driver: subprocess.Popen) -> int | None:
    """A trial child of ``driver``, stopped while the driver waits in its read of the trial's result (which the
    driver cannot leave while the trial is stopped), or None when the driver ended. A trial that had written its
    result already is let go, and the next one held."""
    while driver.poll() is None:
        for child in _children(driver.pid):
            if not _held(child):
                continue
            if "pipe" in _settled_wait_channel(driver.pid):
                return child
            os.kill(child, signal.SIGCONT)
        time.sleep(0.001)
    return None


@pytest.mark.slow
@pytest.mark.skipif(not (Path("/proc/self/task").is_dir() and Path("/proc/self/wchan").exists()),
                    reason="reads /proc for the trial's process")
def test_sigterm_stops_the_trial_child_and_prints_no_traceback():
    proc = subprocess.Popen([sys.executable, "-m", "interlingua.benchmarks.gradcache_memory", *SMALL],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        for line in proc.stdout:  # the batch search has begun (its SIGTERM handler is in place)
            if " batch " in line:
                break
        child = _trial_held_in_its_read(proc)
        assert child is not None, "no trial child seen"
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
        assert not _alive(child)  # stopped before the parent ended, not left running
        _, err = proc.communicate(timeout=60)
        assert "Traceback" not in err
        assert "stopped (SIGTERM) during the batch search" in err
    finally:  # whatever failed: no driver searching on, no trial left stopped
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # its own session: the driver and its trials only
        except ProcessLookupError:
            pass
        proc.wait()


# SIGTERM while the driver forks a trial: a library's at-fork callback (filelock registers one) is held in the
# driver until the signal has come (signal.set_wakeup_fd shows it, whichever thread took it). A thread beside the
# main one stands for torch's: the kernel hands a process's signal to a thread that does not block it.
FORK_DRIVER = """
import os, select, signal, threading, time
from interlingua.benchmarks import gradcache_memory as bench

wakeup_read, wakeup_write = os.pipe()
os.set_blocking(wakeup_write, False)
signal.set_wakeup_fd(wakeup_write)
threading.Thread(target=threading.Event().wait, daemon=True).start()

def held_fork():
    print("forking", flush=True)
    if select.select([wakeup_read], [], [], 60)[0]:
        os.read(wakeup_read, 1)
    time.sleep(0)  # a Python-level handler runs by here, inside this callback

bench.run_trial = lambda spec: time.sleep(30) or {"growth_mib": 0.0}
signal.signal(signal.SIGTERM, bench._stop_the_search)
os.register_at_fork(before=held_fork)
print(bench._trial("plain", 2, {}), flush=True)
print("searched on", flush=True)
"""


def test_sigterm_while_the_driver_forks_a_trial_stops_it_and_its_trial():
    proc = subprocess.Popen([sys.executable, "-c", FORK_DRIVER], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        assert proc.stdout.readline() == "forking\n"
        os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
        assert "searched on" not in out, err
        assert "Exception ignored" not in err
        assert "stopped (SIGTERM) during the batch search" in err
        with pytest.raises(ProcessLookupError):  # the trial went with the driver: nothing left in its session
            os.killpg(proc.pid, 0)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
