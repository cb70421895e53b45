"""``fit`` on a lazy Ray dataset (the README's ``fit(..., store.read_ray(...), ...)``) on a machine of 2 CPUs whose
2 training workers take both: the dataset's reads run before the workers start, so training ends instead of the read
tasks waiting for a CPU forever. Run in a driver process (:mod:`lazy_read_driver`), killed if it does not end."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from faults.harness import cli_env, kill_tree, start
from faults.train_driver import result_line

pytestmark = pytest.mark.slow

DRIVER = str(Path(__file__).with_name("lazy_read_driver.py"))
TIMEOUT_S = 300  # the run takes well under a minute; a hung one waits forever


def test_fit_on_a_lazy_read_finishes_when_the_workers_take_every_cpu(tmp_path):
    log = tmp_path / "driver.log"
    process = start([DRIVER, str(tmp_path)], cli_env(tmp_path), log)
    try:
        process.wait(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"fit on store.read_ray(...) did not end in {TIMEOUT_S} s on 2 CPUs (the dataset's read tasks "
                    f"wait for a CPU the workers hold): {log.read_text()[-2000:]}")
    finally:
        kill_tree(process)
    assert process.returncode == 0, log.read_text()[-3000:]
    result = result_line(log.read_text())
    assert result["step"] == 2 and Path(result["entity_table"]).is_file()
