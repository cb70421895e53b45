"""Make the cluster tests' helpers (``fake_job_api``, ``manifest_schema``) importable."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
