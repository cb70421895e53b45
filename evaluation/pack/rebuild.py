"""The one hint every refusal of a benchmark pack's files ends with: the command that builds the pack again."""

from __future__ import annotations

import shlex
from pathlib import Path


def rebuild_hint(pack_dir: str | Path) -> str:
    """``rebuild the pack: interlingua bench-pack --out DIR`` (``DIR`` quoted for a shell where it needs it)."""
    return f"rebuild the pack: interlingua bench-pack --out {shlex.quote(str(pack_dir))}"
