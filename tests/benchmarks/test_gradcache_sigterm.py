"""``gradcache_memory`` stopped by SIGTERM (``timeout``'s) while a forked trial runs: the trial's child is stopped
too, and nothing prints a traceback (the child wrote to a closed pipe: BrokenPipeError)."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

SMALL = ["--quick", "--hidden", "32", "--layers", "1", "--seq-len", "8", "--vocab", "300", "--threads", "1",
         "--cap-mib", "4096"]  # a search that grows the batch for long: SIGTERM finds a trial running


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc for the trial's process")
def test_sigterm_stops_the_trial_child_and_prints_no_traceback():
    proc = subprocess.Popen([sys.executable, "-m", "interlingua.benchmarks.gradcache_memory", *SMALL],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in proc.stdout:  # the search's trials take longer as the batch doubles: stop one of the longer ones
        if "batch    512:" in line:
            break
    child = None
    while child is None and proc.poll() is None:
        child = next(iter(_children(proc.pid)), None)
    assert child is not None, "no trial child seen"
    os.kill(proc.pid, signal.SIGTERM)
    proc.wait(timeout=60)
    assert not _alive(child)  # stopped before the parent ended, not left running
    _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err
    assert "stopped (SIGTERM)" in err
