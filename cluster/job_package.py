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
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", "*.egg-info")


@dataclass(frozen=True)
class WorkflowJob:
    """A validated workflow run to submit (plain data from the CLI)."""

    workflow: str
    config: dict[str, Any]  # resolved, validated, JSON-able
    version: str  # interlingua's version on the submitting machine
    env: dict[str, str]
    ship_code: bool = False


@dataclass(frozen=True)
class JobPackage:
    entrypoint: str
    runtime_env: dict[str, Any]
    metadata: dict[str, str]
    submission_id: str


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
    if job.ship_code:
        copy_package_tree(folder / "interlingua")
        program = ["python", "-m", "interlingua.workflows.cli"]
    else:
        program = ["interlingua"]
    entrypoint = shlex.join([*program, "run", job.workflow, "-c", CONFIG_FILE])
    runtime_env: dict[str, Any] = {"working_dir": str(folder)}
    env = {k: v for k, v in check_env(job.env).items() if v is not None}
    # The workflow's own ray.init(runtime_env=...) adds variables; let Ray merge them with the job's.
    env["RAY_OVERRIDE_JOB_RUNTIME_ENV"] = "1"
    runtime_env["env_vars"] = env
    metadata = {"interlingua.workflow": job.workflow, "interlingua.version": job.version,
                "interlingua.code": "shipped checkout" if job.ship_code else "cluster image"}
    submission_id = f"interlingua-{job.workflow}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    return JobPackage(entrypoint, runtime_env, metadata, submission_id)


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


def copy_package_tree(target: Path) -> Path:
    """Copy the checkout's packages into ``target`` as one regular package ``interlingua`` (so it is found
    before any installed copy on the job's ``sys.path``)."""
    root = checkout_root()
    target.mkdir(parents=True, exist_ok=True)
    (target / "__init__.py").write_text('"""interlingua, shipped with a job from a source checkout."""\n')
    for name, source in package_folders(root).items():
        sub = name.split(".", 1)[1]
        if source.is_dir():
            shutil.copytree(source, target / sub.replace(".", "/"), ignore=_IGNORED, dirs_exist_ok=True)
    return target
