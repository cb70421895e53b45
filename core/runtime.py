"""Runtime defaults: where state lives, which Ray cluster, which MLflow server, which device.

- State directory: ``$INTERLINGUA_HOME`` or ``./.interlingua`` (holds assets, corpora, the MLflow
  SQLite store and artifact folder, Ray results and the torch-extensions cache).
- Ray: ``--address`` or ``$RAY_ADDRESS`` connects to that cluster; neither starts Ray in-process, bound to
  127.0.0.1 only (GCS, raylet, workers, agents, dashboard: nothing listens on other interfaces).
- MLflow: ``$MLFLOW_TRACKING_URI`` if set, else ``sqlite:///<state>/mlflow.db`` with artifacts in
  ``<state>/mlartifacts``, so runs and the model registry work without a server.
- Device: GPUs -> NCCL and bf16; none -> CPU with gloo and fp32 (the same config runs on both).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

DEFAULT_STATE_DIR = ".interlingua"


def state_path(override: str | os.PathLike | None = None) -> Path:
    """The state directory's path (not created), from ``override``, ``$INTERLINGUA_HOME`` or ``./.interlingua``."""
    return Path(override or os.environ.get("INTERLINGUA_HOME") or DEFAULT_STATE_DIR).expanduser().resolve()


def state_dir(override: str | os.PathLike | None = None) -> Path:
    """The state directory (created), from ``override``, ``$INTERLINGUA_HOME`` or ``./.interlingua``."""
    path = state_path(override)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        from interlingua.core.errors import UserError

        raise UserError(f"state folder {path} cannot be created: {err.strerror or err} (hint: set "
                        f"INTERLINGUA_HOME or state_dir to a writable folder)") from None
    return path


def state_origin(override: str | os.PathLike | None = None) -> str | None:
    """Where :func:`state_path` takes the folder from, for messages: ``--state-dir`` (``override``),
    ``INTERLINGUA_HOME``, or None (the default, ``./.interlingua``)."""
    if override:
        return "--state-dir"
    return "INTERLINGUA_HOME" if os.environ.get("INTERLINGUA_HOME") else None


def missing_state_line(override: str | os.PathLike | None = None) -> str | None:
    """For a command that only reads the state folder (and makes none): None when the folder is there; else one line
    naming its path and where the path came from (:func:`state_origin`), with a hint. The default folder missing is
    a fresh checkout's: the line says that there is none yet and what makes one."""
    path = state_path(override)
    if path.is_dir():
        return None
    what = "is a file, not a folder" if path.exists() else "does not exist"
    makes = "a workflow run makes it, e.g. `interlingua run quickstart`"
    origin = state_origin(override)
    if origin is None:
        return f"no state folder here yet: {path} {what} (hint: {makes}; or set INTERLINGUA_HOME to your state folder)"
    return f"state folder {path} (from {origin}) {what} (hint: check {origin}; {makes})"


def log_folder_for_reading(override: str | os.PathLike | None = None) -> str | None:
    """Where a command that only reads the state folder keeps its log (the CLI's ``log_state_dir`` hook): None, the
    state folder, when it is there; else a :func:`temporary_log_folder`, so that reading makes no state folder (a
    mistyped ``INTERLINGUA_HOME`` would look like an empty one from then on)."""
    if state_path(override).is_dir():
        return None
    return temporary_log_folder()


#: The temporary log folders :func:`temporary_log_folder` made in this process: the only ones ever removed.
_TEMPORARY_LOG_FOLDERS: set[Path] = set()


def temporary_log_folder() -> str:
    """A private temporary folder for a command's log where the state folder does not hold it (a command that only
    reads a state folder that is missing; a state folder that cannot be written). The CLI removes it unless a line
    sent the user to it (:func:`remove_temporary_log_folder`; an unexpected failure's traceback is kept there)."""
    path = tempfile.mkdtemp(prefix="interlingua-logs-")
    _TEMPORARY_LOG_FOLDERS.add(Path(path).resolve())
    return path


def remove_temporary_log_folder(log_path: str | os.PathLike) -> bool:
    """Remove the :func:`temporary_log_folder` holding ``log_path``, when one made in this process does; whether it
    did (a log anywhere else is left alone)."""
    log_path = Path(log_path).resolve()
    folder = next((folder for folder in _TEMPORARY_LOG_FOLDERS if log_path.is_relative_to(folder)), None)
    if folder is None:
        return False
    _TEMPORARY_LOG_FOLDERS.discard(folder)
    shutil.rmtree(folder, ignore_errors=True)
    return True


def state_tempdir_root(state: Path | None = None) -> Path:
    """``<state>/tmp``: the parent of every temporary folder (never the system temp folder)."""
    path = (state or state_dir()) / "tmp"
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def state_tempdir(prefix: str = "tmp-", state: Path | None = None) -> Iterator[str]:
    """A private (mode 0700) temporary folder under ``<state>/tmp``, removed on exit, errors included.
    Corpus data (vocabularies, lexical tables) written there never lands in the shared system temp folder. It is held
    (:func:`~interlingua.core.tempdir_lock.hold`) while it lives and its name carries this machine's
    (``<prefix>@<host>@<random>``): ``interlingua gc`` on this machine removes one no process holds once unchanged for
    a day; gc on another machine cannot see the lock (NFS) and waits a week."""
    from interlingua.core.tempdir_lock import hold, host_marked_prefix

    path = tempfile.mkdtemp(prefix=host_marked_prefix(prefix), dir=state_tempdir_root(state))
    handle = hold(path)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        if handle is not None:
            os.close(handle)


def assets_dir(state: Path | None = None) -> Path:
    path = (state or state_dir()) / "assets"
    path.mkdir(parents=True, exist_ok=True)
    return path


def corpus_root(state: Path | None = None) -> str:
    return str((state or state_dir()) / "corpus")


@dataclass(frozen=True)
class TrackingTarget:
    tracking_uri: str
    artifact_location: str | None  # set for the local default store only


#: The local store :func:`use_tracking_store` exported as ``MLFLOW_TRACKING_URI`` (this process or a parent's), so that
#: a later call does not take it for one the user set: its experiments keep ``<state>/mlartifacts`` (they were created
#: with MLflow's default, ``./mlruns`` in the working directory, which ``gc`` never sees).
OWN_TRACKING_URI = "INTERLINGUA_LOCAL_TRACKING_URI"


def tracking_target(state: Path | None = None) -> TrackingTarget:
    """``$MLFLOW_TRACKING_URI`` when the user set it; otherwise the local SQLite store under the state dir (also when
    the variable holds the local store this process or a parent exported, :data:`OWN_TRACKING_URI`)."""
    uri = os.environ.get("MLFLOW_TRACKING_URI")
    if uri and uri == os.environ.get(OWN_TRACKING_URI) and uri.startswith("sqlite:///"):
        root = Path(uri[len("sqlite:///"):]).parent
        return TrackingTarget(uri, (root / "mlartifacts").as_uri())
    if uri:
        return TrackingTarget(uri, None)
    root = state or state_dir()
    return TrackingTarget(f"sqlite:///{root / 'mlflow.db'}", (root / "mlartifacts").as_uri())


def use_tracking_store(state: Path | None = None) -> TrackingTarget:
    """Point MLflow (tracking and model registry) at the tracking target, so ``models:/`` and ``runs:/``
    URIs resolve against the same store the workflows write to. Exports ``MLFLOW_TRACKING_URI`` so Ray
    workers started afterwards use it too."""
    import mlflow

    from interlingua.core.console import mlflow_events_to_log_file

    target = tracking_target(state)
    check_tracking_server(target.tracking_uri)
    os.environ["MLFLOW_TRACKING_URI"] = target.tracking_uri
    if target.artifact_location is not None:  # the local store: recorded as ours, not the user's
        os.environ[OWN_TRACKING_URI] = target.tracking_uri
    mlflow.set_tracking_uri(target.tracking_uri)
    mlflow.set_registry_uri(target.tracking_uri)
    mlflow_events_to_log_file()
    return target


def check_tracking_store(state: Path | None = None) -> None:
    """:func:`check_tracking_server` of the tracking target, for a workflow that logs to MLflow to call before its
    long work (assets, Ray, a corpus, embeddings): :func:`configure_mlflow` comes after it and would find a server
    that does not answer only then (it asks again for free: a server that answered is asked once)."""
    check_tracking_server(tracking_target(state).tracking_uri)


#: Tracking servers that answered in this process (probed once each).
_ANSWERED: set[str] = set()


def check_tracking_server(uri: str, timeout: float = 3.0) -> None:
    """Fail fast, with a hint, when MLflow takes no store for ``uri``'s scheme (:func:`check_store_scheme`) or nothing
    listens at an ``http(s)://`` tracking server: MLflow's client retries for minutes before it reports one that is
    down. Other stores (SQLite, ``databricks``, files) pass."""
    from urllib.parse import urlsplit

    from interlingua.core.errors import ServiceUnavailable, UserError
    from interlingua.core.net import unreachable
    from interlingua.core.redact import redact_text

    check_store_scheme(uri)
    parts = urlsplit(uri)
    if parts.scheme not in ("http", "https") or uri in _ANSWERED:
        return
    try:
        host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        host = port = None
    if not host:
        raise UserError(f"MLFLOW_TRACKING_URI {redact_text(uri)!r} names no host (hint: http://HOST:PORT)")
    reason = unreachable(host, port, timeout)
    if reason:
        raise ServiceUnavailable(f"the MLflow tracking server at {redact_text(uri)} does not answer ({reason}); "
                                 "start it, fix MLFLOW_TRACKING_URI, or unset it for the local store under the "
                                 "state folder")
    _ANSWERED.add(uri)


#: The store URIs MLflow takes as whole names, not by a scheme (its ``StoreRegistry.get_store_builder``).
NAMED_STORES = frozenset({"databricks", "databricks-uc", "uc"})


def store_scheme(uri: str) -> str:
    """What MLflow's store registries choose ``uri``'s store by: a :data:`NAMED_STORES` name whole, else its scheme
    (``''`` for a local path, ``postgresql`` for ``postgresql+psycopg2://``)."""
    from urllib.parse import urlsplit

    from mlflow.exceptions import MlflowException
    from mlflow.utils.uri import get_uri_scheme

    if uri in NAMED_STORES:
        return uri
    try:
        return get_uri_scheme(uri)
    except MlflowException:  # a scheme that starts with a database's name and is none (sqlitex://): as written
        return urlsplit(uri).scheme


def unsupported_store_line(setting: str, uri: str, schemes: list[str]) -> str:
    """The one line for ``setting=uri`` whose scheme MLflow takes no store for: that scheme, the ``schemes`` it takes,
    all named in full, and a hint (credentials in ``uri`` are left to the caller to mask)."""
    listed = ", ".join("'' (a local path)" if not scheme else scheme for scheme in schemes)
    return (f"the URI scheme {store_scheme(uri)!r} of {setting}={uri} is not one MLflow supports (supported: {listed}) "
            f"(hint: set {setting} to such a URI, e.g. sqlite:///mlflow.db or http://HOST:5000)")


def check_store_scheme(uri: str, setting: str = "MLFLOW_TRACKING_URI") -> None:
    """:class:`UserError` (:func:`unsupported_store_line`, naming ``setting``) when MLflow's tracking or model-registry
    store registry takes no store for the tracking URI ``uri``'s scheme (:func:`use_tracking_store` makes it the
    registry URI too).
    Each registry's schemes are compared with the one it would choose ``uri``'s store by (:func:`store_scheme`, which
    takes a near miss of a database's scheme, ``sqlitex://``, as written): no store is built, no file created, no
    server contacted. The registries are MLflow's private names: an MLflow without them skips this check (MLflow's
    own error, later)."""
    try:
        from mlflow.tracking._model_registry.utils import _get_store_registry
        from mlflow.tracking._tracking_service.utils import _tracking_store_registry

        taken = [list(registry._registry) for registry in (_tracking_store_registry, _get_store_registry())]
    except (ImportError, AttributeError):  # pragma: no cover - another MLflow's internals
        return
    from interlingua.core.errors import UserError
    from interlingua.core.redact import redact_text

    scheme = store_scheme(uri)
    for schemes in taken:
        if scheme not in schemes:
            raise UserError(redact_text(unsupported_store_line(setting, uri, schemes)))


def configure_mlflow(experiment: str, state: Path | None = None) -> str:
    """Point MLflow at the tracking target (:func:`use_tracking_store`), create/select ``experiment``;
    returns its id."""
    import mlflow

    target = use_tracking_store(state)
    exp = mlflow.get_experiment_by_name(experiment)
    if exp is None:
        exp_id = mlflow.create_experiment(experiment, artifact_location=target.artifact_location)
    else:
        exp_id = exp.experiment_id
    mlflow.set_experiment(experiment_id=exp_id)
    return exp_id


def chosen_ray_address(address: str | None = None) -> str | None:
    """The Ray cluster the user chose: ``address``, else ``$RAY_ADDRESS``; ``None`` (a local Ray) when neither is set or
    the one set is the address :func:`init_ray` recorded for a local Ray it started earlier in this process or a parent
    (which may be gone: a later command in the same process starts a local Ray again), or ``local`` (Ray's word for a
    new local Ray: ``--address local`` wins over a ``$RAY_ADDRESS`` of a cluster)."""
    own = os.environ.get(OWN_RAY_ADDRESS)
    for candidate in (address, os.environ.get("RAY_ADDRESS")):
        if candidate == "local":
            return None
        if candidate and candidate != own:
            return candidate
    return None


def init_ray(address: str | None = None, *, num_cpus: int | None = None, object_store_memory: int | None = None):
    """Connect to ``address`` / ``$RAY_ADDRESS``, or start a local Ray in-process. Idempotent.

    A local Ray gets at least 4 logical CPUs (training workers reserve one each and Ray Data's
    read/shuffle tasks need their own, or a 2-core machine would deadlock feeding 2 workers), and listens
    on the loopback interface only (:func:`_loopback_only`)."""
    import ray

    if ray.is_initialized():
        return ray
    own = os.environ.get(OWN_RAY_ADDRESS)
    if own and os.environ.get("RAY_ADDRESS") == own:
        # set by init_ray for a local Ray of this process (or of a parent): not a cluster the user chose
        del os.environ["RAY_ADDRESS"]
    given, address = address, chosen_ray_address(address)
    # Workers must import the interlingua package the same way the driver does.
    os.environ.setdefault("TORCH_EXTENSIONS_DIR", str(state_dir() / "torch_extensions"))
    from interlingua.core.console import QUIET_ENV, child_stderr_to_log, is_verbose, to_log_file_only

    if address:
        check_cluster_address(given)  # given: so that its messages say whether --address or $RAY_ADDRESS is wrong
    if not address and not device_plan_uses_gpu_hint():
        # A local Ray on a machine without GPUs: DeepSpeed would otherwise warn on every worker while detecting it.
        os.environ.setdefault("DS_ACCELERATOR", "cpu")
    env = {"env_vars": forwarded_env(QUIET_ENV)}
    quiet = {} if is_verbose() else {"logging_level": "ERROR",
                                     "logging_config": ray.LoggingConfig(encoding="TEXT", log_level="WARNING")}
    if not is_verbose():
        import logging

        logging.getLogger("ray").setLevel(logging.ERROR)
    # "Token authentication is enabled for this Ray cluster ...", logged during ray.init on Ray's own handler
    to_log_file_only("ray._private.authentication.authentication_token_setup")
    if address:
        hook = {} if job_sets_a_setup_hook() else CLUSTER_WORKER_SETUP  # the user's own wins (Ray refuses two)
        ray.init(address=scheme_in_lower_case(address), runtime_env={**env, **hook}, log_to_driver=True, **quiet)
        _note_ray_logs(ray)
        return ray
    else:
        _loopback_only()
        # a cluster's address (--address local won over it) or "local" must not reach this Ray's workers, which inherit
        # the environment (workers_know_their_cluster keeps one they find); ray.init(address="local") ignores it
        os.environ.pop("RAY_ADDRESS", None)
        with child_stderr_to_log():  # the GCS and raylet write their C++ error lines on the stderr they inherit
            _start_local_ray(ray, num_cpus, object_store_memory, env, quiet)
        # Ray's own clients in this process (the state API) look the cluster up by address; with another Ray running
        # on this machine they would find two and fail. Point them at ours (workers: workers_know_their_cluster).
        os.environ[OWN_RAY_ADDRESS] = os.environ["RAY_ADDRESS"] = ray.get_runtime_context().gcs_address
    _note_ray_logs(ray)
    return ray


def local_ray_cpus() -> int:
    """The logical CPUs a local Ray gets (:func:`init_ray` without ``num_cpus``): this machine's, at least 4."""
    return max(4, os.cpu_count() or 1)


def _start_local_ray(ray, num_cpus: int | None, object_store_memory: int | None, env: dict, quiet: dict) -> None:
    ray.init(
        address="local",
        dashboard_host=LOOPBACK,
        # Logical CPUs: Ray Train workers hold one each, and Ray Data needs some left to feed them.
        num_cpus=num_cpus or local_ray_cpus(),
        object_store_memory=object_store_memory or 512 * 1024**2,
        runtime_env={**env, **LOCAL_WORKER_SETUP},
        log_to_driver=True,
        **quiet,
    )


#: Marks the RAY_ADDRESS that init_ray set for its own local Ray, so that a later init_ray (after a shutdown, or in
#: a child process) starts a local Ray as before instead of taking it for a cluster the user chose.
OWN_RAY_ADDRESS = "INTERLINGUA_LOCAL_RAY_ADDRESS"


LOOPBACK = "127.0.0.1"

#: What each worker of a cluster runs as it starts (Ray's worker setup hook, a module path: interlingua is installed
#: on a cluster's workers, or shipped in a job's working_dir, which Ray puts on their PYTHONPATH): it prints whole
#: lines (:func:`~interlingua.core.console.worker_prints_whole_lines`), Ray Data's tasks and operator actors as Ray
#: Train's workers. A job submitted through the job API keeps it: Ray merges the job's runtime_env with the one given
#: to ``ray.init``. Ray Client (``ray://``) runs no setup hook (Ray skips it for a client's job), so the training loop
#: calls it too.
CLUSTER_WORKER_SETUP = {"worker_process_setup_hook": "interlingua.core.console.worker_prints_whole_lines"}

#: What each worker of a local Ray runs as it starts: :func:`setup_local_worker`.
LOCAL_WORKER_SETUP = {"worker_process_setup_hook": "interlingua.core.runtime.setup_local_worker"}


def job_sets_a_setup_hook() -> bool:
    """Whether this driver runs as a job (``ray job submit``) whose runtime_env has a worker setup hook of its own:
    Ray would refuse ours beside it (a conflict) or replace the user's, so the user's stays alone."""
    job_config = os.environ.get("RAY_JOB_CONFIG_JSON_ENV_VAR")  # set by Ray's job manager for a job's driver
    try:
        runtime_env = (json.loads(job_config) or {}).get("runtime_env") or {} if job_config else {}
    except (ValueError, AttributeError):
        return False
    return isinstance(runtime_env, dict) and bool(runtime_env.get("worker_process_setup_hook"))


def setup_local_worker() -> None:
    """Runs in each worker of a local Ray as it starts, after Ray has set up its output streams: the worker knows its
    cluster (:func:`workers_know_their_cluster`) and prints whole lines
    (:func:`~interlingua.core.console.worker_prints_whole_lines`), so no task or actor's print reaches the driver's
    console as an empty line."""
    from interlingua.core.console import worker_prints_whole_lines

    workers_know_their_cluster()
    worker_prints_whole_lines()


def workers_know_their_cluster() -> None:
    """Runs in each worker of a local Ray as it starts: ``RAY_ADDRESS`` = this cluster's GCS. Ray Train's actors
    query Ray's state API with no address, which looks for the running Ray instances and fails with "Found
    multiple active Ray instances" (a traceback on the console) on a machine where another Ray runs too."""
    import ray

    try:
        os.environ.setdefault("RAY_ADDRESS", ray.get_runtime_context().gcs_address)
    except Exception:  # pragma: no cover - never fail a worker's start over it
        pass


def _loopback_only() -> None:
    """Make the next local Ray bind every server to 127.0.0.1.

    Ray 2.60's GCS, raylet, core workers and agents listen on all interfaces unless the node's IP is the
    loopback address, and ``ray.init(_node_ip_address="127.0.0.1")`` is turned back into the machine's
    external IP (``services.resolve_ip_for_localhost``). The switch Ray reads to decide that the node IP is
    127.0.0.1 is ``ray_constants.ENABLE_RAY_CLUSTER`` (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER``; false is the
    single-machine mode Ray uses on macOS and Windows): set for this process and, through the environment,
    for the processes the local Ray starts. A cluster (``--address``) is not affected."""
    from ray._private import ray_constants

    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False


def _note_ray_logs(ray) -> None:
    """Record where Ray keeps its own logs (workers, raylet, Ray Data) in our log file."""
    import logging

    from interlingua.core.console import forward_ray_cpp_lines_to_log_file, logger_through_our_handlers, restore_handlers

    restore_handlers()
    logger_through_our_handlers("ray")  # ray.init gave it a stderr handler of its own
    forward_ray_cpp_lines_to_log_file()
    try:
        logs = ray._private.worker._global_node.get_logs_dir_path()  # noqa: SLF001 - no public API for it
    except Exception:  # pragma: no cover - remote clusters keep logs on their nodes
        logs = "on the cluster's nodes (ray logs ...)"
    logging.getLogger("interlingua.runtime").info("Ray's own logs: %s", logs)


#: How a command that was given a job-submission URL is submitted as a Ray job instead.
_SUBMIT_INSTEAD = {"run": "interlingua submit WORKFLOW", "refresh": "interlingua submit refresh -c SPEC.yaml",
                   "schedule": "interlingua submit refresh -c SPEC.yaml (from a scheduler: the CronJob in cluster/kuberay)"}


#: The schemes a Ray address may have, for every command given one: Ray Client's and the dashboard's (the job API of
#: `jobs` and `submit`; `run` points such a URL at `submit`); none is a bare HOST:PORT. Any other is a typo (``htp://``)
#: that Ray would import as a module.
RAY_ADDRESS_SCHEMES = ("ray", "http", "https")
#: What a command that connects to Ray (`run`, `refresh`, `schedule`) takes, as a refused scheme's message lists it.
RAY_ADDRESS_FORMS = "HOST:PORT (the cluster's GCS, e.g. 10.0.0.5:6379) or ray:// (Ray Client, e.g. ray://HEAD:10001)"


def ray_address_scheme(address: str, *, source: str, takes: str = "Ray", forms: str = RAY_ADDRESS_FORMS) -> str:
    """The scheme of the Ray address ``address`` in lower case, "" for a bare HOST:PORT. Another scheme than
    :data:`RAY_ADDRESS_SCHEMES` is a :class:`UserError` (exit 2), one line naming ``source`` (``--address``,
    ``$RAY_ADDRESS``) and listing ``forms``, the forms ``takes`` (what the command gives the address to) accepts;
    nothing is contacted before."""
    from interlingua.core.errors import UserError
    from interlingua.core.redact import redact_text, redact_url

    scheme, separator, _ = address.partition("://")
    if not separator:
        return ""
    if scheme.lower() not in RAY_ADDRESS_SCHEMES:
        shown = redact_text(redact_url(address))  # as a URL: its scheme in lower case
        raise UserError(f"cluster address {shown} ({source}): {scheme.lower()}:// is not a scheme "
                        f"{takes} takes; use {forms}")
    return scheme.lower()


def scheme_in_lower_case(address: str) -> str:
    """``address`` with its scheme in lower case (``RAY://h:10001`` -> ``ray://h:10001``): :func:`ray_address_scheme`
    takes any case, Ray's clients only lower case."""
    scheme, separator, rest = address.partition("://")
    return f"{scheme.lower()}://{rest}" if separator else address


def check_reachable(address: str, timeout: float = 3.0, *, command: str = "run", source: str = "--address") -> None:
    """Fail fast, with a hint, when nothing listens at a Ray address (Ray itself retries for ~90 s), or its scheme is
    none Ray takes (:func:`ray_address_scheme`). ``auto`` and ``local`` are left to Ray. ``command``: the interlingua
    command given the address, for the hint; ``source``: where the address came from (``--address``,
    ``$RAY_ADDRESS``)."""
    from urllib.parse import urlsplit

    from interlingua.core.errors import ServiceUnavailable, UserError
    from interlingua.core.net import unreachable
    from interlingua.core.redact import redact_text

    if address in ("auto", "local"):
        return
    scheme = ray_address_scheme(address, source=source)
    parts = urlsplit(address if scheme else f"gcs://{address}")
    if scheme in ("http", "https"):
        shown = redact_text(address)
        submit = _SUBMIT_INSTEAD.get(command, _SUBMIT_INSTEAD["run"])
        raise UserError(f"--address {shown} is a dashboard/job-submission URL; `{command}` needs the cluster's GCS "
                        f"address (HOST:6379), or submit it as a job with `{submit} --address {shown}`")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or not port:
        raise UserError(f"--address {redact_text(address)!r}: expected HOST:PORT (e.g. 10.0.0.5:6379) or "
                        "ray://HOST:10001")
    reason = unreachable(host, port, timeout)
    if reason:
        raise ServiceUnavailable(f"cannot reach a Ray cluster at {redact_text(address)} ({reason}); start one with "
                                 f"`ray start --head`, fix --address / RAY_ADDRESS, or leave both unset for a local "
                                 "Ray")


def check_cluster_address(address: str | None, *, command: str = "run") -> None:
    """Before anything runs on the Ray cluster ``address`` (``--address``, else ``RAY_ADDRESS``:
    :func:`chosen_ray_address`; nothing to check for a local Ray): an ``MLFLOW_TRACKING_URI`` that carries a
    credential is refused (the driver's environment, which :func:`init_ray` forwards it in, is kept in the cluster's
    job table, as a submitted job's is), then the address is probed (:func:`check_reachable`)."""
    from interlingua.core.tracking_credentials import refuse_tracking_uri_credentials

    chosen = chosen_ray_address(address)
    if not chosen:
        return
    refuse_tracking_uri_credentials(os.environ.get("MLFLOW_TRACKING_URI"))
    check_reachable(chosen, command=command, source="--address" if chosen == address else "$RAY_ADDRESS")


def forwarded_env(extra: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment :func:`init_ray` gives the workers (``_FORWARDED_ENV`` and ``extra`` that are set). A value
    that carries a credential is left out: Ray keeps this environment in its job table; a cluster's is refused
    before (:func:`check_cluster_address`), and a local Ray's workers inherit it from this process anyway."""
    from interlingua.core.redact import redact_text

    return {k: os.environ[k] for k in (*_FORWARDED_ENV, *extra)
            if k in os.environ and redact_text(os.environ[k]) == os.environ[k]}


_FORWARDED_ENV = ("MLFLOW_TRACKING_URI", OWN_TRACKING_URI, "INTERLINGUA_HOME", "TORCH_EXTENSIONS_DIR", "DS_ACCELERATOR",
                  "HF_HUB_OFFLINE", "INTERLINGUA_VERBOSE", "INTERLINGUA_LOG_FILE")


@dataclass(frozen=True)
class DevicePlan:
    use_gpu: bool
    backend: str  # "nccl" | "gloo"
    precision: str  # "bf16" | "fp32"


def device_plan(use_gpu: bool | None = None) -> DevicePlan:
    """GPU -> NCCL + bf16; CPU -> gloo + fp32. ``use_gpu=None`` decides from the cluster / machine."""
    if use_gpu is None:
        use_gpu = _gpus_available()
    return DevicePlan(use_gpu, "nccl" if use_gpu else "gloo", "bf16" if use_gpu else "fp32")


def device_plan_uses_gpu_hint() -> bool:
    """Whether this machine has a CUDA device (without starting Ray or importing torch when avoidable)."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) == "":
        return False
    return any(Path("/dev").glob("nvidia[0-9]*"))


def _gpus_available() -> bool:
    try:
        import ray

        if ray.is_initialized():
            return ray.cluster_resources().get("GPU", 0) > 0
    except ImportError:  # pragma: no cover
        pass
    import torch

    return torch.cuda.is_available()
