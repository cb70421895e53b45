"""What a submitted workflow job is made of: the entrypoint, the runtime environment (the resolved config
file, and with ``ship_code`` the local checkout), the job's environment variables and its metadata.

The job's working directory on the cluster is a small folder uploaded with the job: it holds the
resolved, validated config as ``interlingua-job.yaml``, so the job runs exactly what was checked here. Ray keeps
that package and shows the job's environment, so neither may carry a credential (:func:`check_env`,
:func:`check_config`).
By default the cluster's image provides interlingua (the job records the version it was submitted
with); ``ship_code`` adds the local package tree as ``interlingua/`` so the job imports the checkout.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import time
import tomllib
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interlingua.core.errors import UserError
from interlingua.core.redact import is_secret_key, redact_text

CONFIG_FILE = "interlingua-job.yaml"
#: Names that carry secrets: never sent in a job's environment (it is visible in the job's info; Ray keeps a job's
#: runtime_env in its job table and shows it on the dashboard). Values are checked too: see :func:`check_env`.
_SECRET_NAME = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|ACCESS_KEY|PRIVATE_KEY|API_KEY)", re.IGNORECASE)


@dataclass(frozen=True)
class WorkflowJob:
    """A validated workflow run to submit (plain data from the CLI)."""

    workflow: str
    config: dict[str, Any]  # resolved, validated, JSON-able
    version: str  # interlingua's version on the submitting machine
    env: dict[str, str]
    ship_code: bool = False
    command: str = "run"  # "refresh": the config is a refresh spec, run as `interlingua refresh SPEC`


@dataclass(frozen=True)
class JobPackage:
    entrypoint: str
    runtime_env: dict[str, Any]
    metadata: dict[str, str]
    submission_id: str
    shipped: ShippedTree | None = None  # with ship_code: what was uploaded


def check_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` when no variable is, or carries, a secret: a name such as ``*_TOKEN``, or a value with a URL's
    user-info or token parameter, a ``password=``-style pair or a connection string's key (whatever
    :func:`~interlingua.core.redact.redact_text` would mask); else a :class:`UserError` that shows no value."""
    for name, value in env.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise UserError(f"--env {name}=...: not a valid environment variable name")
        if _SECRET_NAME.search(name):
            raise UserError(f"--env {name}=...: secrets are not sent with a job (its environment is visible to "
                            "anyone who can list jobs); give them to the cluster's nodes instead (e.g. a Kubernetes Secret)")
        refuse_credentials(f"--env {name}=...", value)
    return env


def check_config(config: Any, key: str = "") -> Any:
    """``config`` when none of its values (nested mappings and lists included) is, or carries, a credential: a key
    named like a secret (``password``, ``*_token``, ``api_key``, ``storage_options.secret`` ...) with a value, or a
    string :func:`~interlingua.core.redact.redact_text` would mask (a URL's user-info or ``?token=``, a SAS
    signature, a ``password=`` pair, a connection string's key); else a :class:`UserError` naming the (dotted)
    key, never the value. The config (``-c FILE`` and ``--set`` merged) is uploaded with the job."""
    if isinstance(config, dict):
        for name, value in config.items():
            dotted = f"{key}.{name}" if key else str(name)
            if is_secret_key(str(name)) and value not in (None, "", [], {}):
                # quoted: "password=...:" would read as a pair to the console's masking, which eats the colon
                raise UserError(f"config key {dotted!r} is named like a credential and has a value, and "
                                f"{_CONFIG_CARRIER}; {_CREDENTIAL_HINT}")
            check_config(value, dotted)
    elif isinstance(config, (list, tuple)):
        for i, value in enumerate(config):
            check_config(value, f"{key}[{i}]")
    elif isinstance(config, str):
        refuse_credentials(f"{key or 'config'}=...", config, carrier=_CONFIG_CARRIER)
    return config


_CONFIG_CARRIER = ("a job's config (-c FILE and --set, merged) is uploaded with the job and kept in its package "
                   "for anyone who can list jobs to read")


def carries_credentials(value: str | None) -> bool:
    """Whether ``value`` holds something :func:`~interlingua.core.redact.redact_text` masks (a secret)."""
    return bool(value) and redact_text(value) != value


_ENV_CARRIER = "a job's environment is stored with the job for anyone who can list jobs to read"
_CREDENTIAL_HINT = ("give the secret to the cluster's nodes instead (e.g. a Kubernetes Secret or the cluster's "
                    "environment: AWS_ACCESS_KEY_ID for s3://, MLFLOW_TRACKING_TOKEN for MLflow) and send only "
                    "values without it")


def refuse_credentials(what: str, value: str | None, *, carrier: str = _ENV_CARRIER) -> None:
    """A :class:`UserError` naming ``what`` (never the value) when ``value`` carries a credential; ``carrier``
    says where the value would be kept."""
    if carries_credentials(value):
        raise UserError(f"{what}: the value carries a credential (a password, token, key or signature), and "
                        f"{carrier}; {_CREDENTIAL_HINT}")


def build_package(job: WorkflowJob, folder: Path) -> JobPackage:
    """Write the job's working directory into ``folder`` (empty) and describe the job."""
    import yaml

    check_config(job.config)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / CONFIG_FILE).write_text(yaml.safe_dump(job.config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    shipped = None
    if job.ship_code:
        shipped = copy_package_tree(folder / "interlingua")
        program = ["python", "-m", "interlingua.workflows.cli"]
    else:
        program = ["interlingua"]
    command = ["refresh", CONFIG_FILE] if job.command == "refresh" else ["run", job.workflow, "-c", CONFIG_FILE]
    entrypoint = shlex.join([*program, *command])
    runtime_env: dict[str, Any] = {"working_dir": str(folder)}
    env = {k: v for k, v in check_env(job.env).items() if v is not None}
    # The workflow's own ray.init(runtime_env=...) adds variables; let Ray merge them with the job's.
    env["RAY_OVERRIDE_JOB_RUNTIME_ENV"] = "1"
    runtime_env["env_vars"] = env
    metadata = {"interlingua.workflow": job.workflow, "interlingua.command": job.command,
                "interlingua.version": job.version,
                "interlingua.code": "shipped checkout" if job.ship_code else "cluster image"}
    kind = job.workflow if job.command == "run" else f"{job.command}-{job.workflow}"
    submission_id = f"interlingua-{kind}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    return JobPackage(entrypoint, runtime_env, metadata, submission_id, shipped)


def checkout_root() -> Path:
    """The source checkout this package runs from (the folder with ``pyproject.toml``)."""
    root = Path(__file__).resolve().parent.parent
    if not (root / "pyproject.toml").is_file():
        raise UserError("--ship-code ships a source checkout, but interlingua is installed from a wheel here; "
                        "run from a checkout (pip install -e .) or drop --ship-code to use the cluster's image")
    return root


def package_folders(root: Path) -> dict[str, Path]:
    """``interlingua.X`` -> its source folder, from pyproject's ``[tool.setuptools.package-dir]``."""
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    mapping = data.get("tool", {}).get("setuptools", {}).get("package-dir", {})
    return {name: root / folder for name, folder in mapping.items() if name.startswith("interlingua.")}


@dataclass(frozen=True)
class ShippedTree:
    """What :func:`copy_package_tree` uploaded: files and bytes, and how many files it left out and why (Python's
    caches not counted)."""

    files: int
    bytes: int
    left_out: dict[str, int]

    def line(self) -> str:
        left = ", ".join(f"{count} {why}" for why, count in self.left_out.items() if count)
        return f"--ship-code: {self.files} files ({self.bytes / 2**20:.1f} MiB) of this checkout" + (
            f"; left out: {left}" if left else "")


def copy_package_tree(target: Path, root: Path | None = None) -> ShippedTree:
    """Copy the checkout's packages into ``target`` as one regular package ``interlingua`` (so it is found
    before any installed copy on the job's ``sys.path``): only the files :func:`shipped_files` picks."""
    root = root or checkout_root()
    target.mkdir(parents=True, exist_ok=True)
    (target / "__init__.py").write_text('"""interlingua, shipped with a job from a source checkout."""\n')
    files, total, left_out = 0, 0, {}
    for name, source in package_folders(root).items():
        if not source.is_dir():
            continue
        chosen, skipped = shipped_files(root, source)
        for why, count in skipped.items():
            left_out[why] = left_out.get(why, 0) + count
        destination = target / name.split(".", 1)[1].replace(".", "/")
        for path in chosen:
            out = destination / path.relative_to(source)
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, out, follow_symlinks=False)
            files, total = files + 1, total + out.stat().st_size
    return ShippedTree(files, total, left_out)


def shipped_files(root: Path, folder: Path) -> tuple[list[Path], dict[str, int]]:
    """The files of ``folder`` (a package folder of the checkout ``root``) that ``--ship-code`` uploads, sorted, and
    how many it leaves out by reason.

    In a git work tree only the files git tracks or would track (``git ls-files --cached --others
    --exclude-standard``: not what ``.gitignore`` excludes, such as data, outputs or a ``.env``); without git every
    file. Never a hidden file or folder (``.env``, ``.aws/``), a symbolic link (it may point anywhere, e.g. at a
    credentials file) or Python's caches."""
    listed = _git_listed(root, folder)
    walked = sorted(p for p in folder.rglob("*") if p.is_file() or p.is_symlink())
    chosen: list[Path] = []
    left_out = {"git-ignored": 0, "hidden": 0, "links": 0}
    for path in walked:
        parts = path.relative_to(folder).parts
        if any(part == "__pycache__" or part.endswith((".pyc", ".egg-info")) for part in parts):
            continue  # Python's caches: rebuilt on the cluster, not worth a line
        if any(part.startswith(".") for part in parts):
            left_out["hidden"] += 1
        elif path.is_symlink():  # rglob does not descend into a linked folder: it lists only the link
            left_out["links"] += 1
        elif listed is not None and path not in listed:
            left_out["git-ignored"] += 1
        else:
            chosen.append(path)
    return chosen, left_out


def _git_listed(root: Path, folder: Path) -> set[Path] | None:
    """The files under ``folder`` git tracks or would track (absolute paths), or None outside a git work tree (or
    without git). The work tree may start above ``root`` (a checkout inside a larger repository)."""
    import subprocess

    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard",
                              "--", str(folder.relative_to(root))], capture_output=True, check=True, timeout=60).stdout
    except (subprocess.SubprocessError, OSError):
        return None
    return {root / os.fsdecode(name) for name in out.split(b"\0") if name}
