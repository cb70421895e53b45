"""Check for, and where possible install, the Debian packages an offline asset is built from.

``ensure_debian_packages(pkgs)`` asks dpkg which packages are installed; when some are missing and the
process runs as root on a system with ``apt-get``, it installs them with
``apt-get install -y --no-install-recommends`` (the package lists are assumed to be up to date already:
no ``apt-get update`` is run here). It never raises for a failed install: it returns a
:class:`DebianPackagesReport` whose ``message`` says which packages are still missing and why, so the caller
decides. ``require_debian_packages`` is the raising variant used by the asset builders.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Iterable

# Debian policy §5.6.7: lower case letters, digits, '+', '-', '.'; at least two characters, starting alphanumeric.
_DEBIAN_PACKAGE_NAME = re.compile(r"^[a-z0-9][a-z0-9+.\-]+$")


class MissingDebianPackagesError(RuntimeError):
    """Raised when an asset cannot be built because Debian packages are missing and could not be installed."""


@dataclass(frozen=True)
class DebianPackagesReport:
    """Outcome of :func:`ensure_debian_packages`.

    ``installed``: requested packages installed after the call (sorted); ``newly_installed``: those of them
    this call installed; ``missing``: requested packages still not installed; ``message``: one human-readable
    line explaining the outcome (which packages are missing and why, and the command that would install them).
    """

    installed: tuple[str, ...]
    newly_installed: tuple[str, ...]
    missing: tuple[str, ...]
    message: str

    @property
    def ok(self) -> bool:
        """True when every requested package is installed."""
        return not self.missing


def validate_package_names(pkgs: Iterable[str]) -> tuple[str, ...]:
    """Return the names sorted and deduplicated; raise ValueError for a name that is not a Debian package name."""
    names = tuple(sorted(set(pkgs)))
    if not names:
        raise ValueError("pkgs: expected at least one Debian package name, got none")
    for name in names:
        if not isinstance(name, str) or not _DEBIAN_PACKAGE_NAME.match(name):
            raise ValueError(
                f"pkgs: {name!r} is not a valid Debian package name (expected lower-case letters, digits, '+', '-', '.')"
            )
    return names


def installed_debian_packages(pkgs: Iterable[str]) -> set[str]:
    """Return the subset of ``pkgs`` that dpkg reports as fully installed (empty set where dpkg is absent)."""
    names = validate_package_names(pkgs)
    if shutil.which("dpkg-query") is None:
        return set()
    # One query for all names; unknown names make dpkg-query exit 1 but still print the known ones.
    completed = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Package} ${db:Status-Status}\n", *names],
        capture_output=True,
        text=True,
        check=False,
    )
    installed = set()
    for line in completed.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1] == "installed":
            installed.add(parts[0].split(":")[0])  # strip a ":arch" qualifier
    return installed & set(names)


def _install_command(names: Iterable[str]) -> str:
    return "apt-get install -y --no-install-recommends " + " ".join(names)


def ensure_debian_packages(
    pkgs: Iterable[str], install: bool = True, lock_timeout_s: int = 300
) -> DebianPackagesReport:
    """Make sure the Debian packages ``pkgs`` are installed, installing the missing ones when possible.

    Inputs: ``pkgs`` package names; ``install`` False only checks; ``lock_timeout_s`` how long apt waits for the
    dpkg lock held by another apt process (apt's ``DPkg::Lock::Timeout``). Installing needs root and
    ``apt-get``; otherwise, or when apt fails, the report lists what is still missing. Never raises for that.
    """
    names = validate_package_names(pkgs)
    if lock_timeout_s < 0:
        raise ValueError(f"lock_timeout_s: expected a non-negative number of seconds, got {lock_timeout_s!r}")
    before = installed_debian_packages(names)
    missing = [name for name in names if name not in before]
    if not missing:
        return DebianPackagesReport(tuple(sorted(before)), (), (), "all Debian packages installed: " + " ".join(names))

    reason: str
    if not install:
        reason = "installation not requested (install=False)"
    elif shutil.which("apt-get") is None:
        reason = "apt-get is not available on this system"
    elif os.geteuid() != 0:
        reason = "installing needs root (run as root or ask an administrator)"
    else:
        completed = subprocess.run(
            ["apt-get", "install", "-y", "--no-install-recommends", "-o", f"DPkg::Lock::Timeout={lock_timeout_s}", *missing],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
        )
        tail = " | ".join(completed.stderr.strip().splitlines()[-3:])
        reason = f"apt-get exited with status {completed.returncode}" + (f": {tail}" if tail else "")

    after = installed_debian_packages(names)
    still_missing = tuple(name for name in names if name not in after)
    newly = tuple(sorted(set(after) - before))
    if still_missing:
        message = (
            f"missing Debian packages: {' '.join(still_missing)} ({reason}); "
            f"install them with: {_install_command(still_missing)}"
        )
    else:
        message = "installed Debian packages: " + " ".join(newly)
    return DebianPackagesReport(tuple(sorted(after)), newly, still_missing, message)


def require_debian_packages(pkgs: Iterable[str], asset: str, install: bool = True) -> DebianPackagesReport:
    """Like :func:`ensure_debian_packages`, but raise :class:`MissingDebianPackagesError` naming ``asset``
    (what cannot be built) when packages remain missing."""
    report = ensure_debian_packages(pkgs, install=install)
    if not report.ok:
        raise MissingDebianPackagesError(f"cannot build {asset}: {report.message}")
    return report
