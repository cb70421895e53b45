"""The one error type of ``interlingua.cluster``: user mistakes the CLI prints as one line (exit 2)."""

from __future__ import annotations

try:
    from interlingua.core.errors import UserError
except ImportError:  # pragma: no cover - before the core/ layering commit
    from interlingua.workflows.errors import UserError  # type: ignore[no-redef]

__all__ = ["UserError"]
