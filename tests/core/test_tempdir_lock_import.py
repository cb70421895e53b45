"""``core.tempdir_lock`` is imported by ``interlingua gc`` and every state tempdir: importing it loads no fsspec (its
``core.no_follow`` is imported where a folder is opened)."""

import subprocess
import sys


def test_importing_tempdir_lock_loads_no_fsspec(tmp_path):
    script = ("import sys\nfrom interlingua.core import tempdir_lock\nprint('fsspec' in sys.modules)\n"
              f"print(tempdir_lock.held({str(tmp_path)!r}) is not None)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True"]
