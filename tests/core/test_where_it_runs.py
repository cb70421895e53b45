"""Checks of the machine that runs the work are made there: for a cluster the user chose, as one Ray task after
connecting (the driver's Apertium or model folders do not decide), for a local run here before Ray."""

from __future__ import annotations

import os

import pytest

from interlingua.core import where_it_runs
from interlingua.core.errors import UserError


class _Built(Exception):
    """The run got past its checks to building the corpus."""


def _build(*args, **kwargs):
    raise _Built


def test_apertium_bitext_checks_the_clusters_apertium_not_the_drivers(tmp_path, monkeypatch):
    from interlingua.core import runtime
    from interlingua.operators.translate import apertium_backend
    from interlingua.workflows import apertium_bitext, bitext_source

    installed: set[str] = set()  # the driver: no Apertium
    on_cluster: list[str] = []

    def cluster_with_eng_spa(function, *args):
        on_cluster.append("checked")
        installed.add("eng-spa")
        try:
            return function(*args)
        finally:
            installed.clear()

    source = tmp_path / "english.txt"
    source.write_text("The house is big and the garden is small.\n", encoding="utf-8")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(apertium_backend, "installed_modes", lambda: installed)
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: None)
    monkeypatch.setattr(where_it_runs, "on_the_cluster", cluster_with_eng_spa)
    monkeypatch.setattr(bitext_source, "publish_shards", _build)
    config = apertium_bitext.ApertiumBitextConfig(source=str(source), languages=["es"], state_dir=str(tmp_path / "s"))
    with pytest.raises(_Built):
        apertium_bitext.run(config, address="ray://head:10001")
    assert on_cluster == ["checked"]
    with pytest.raises(UserError, match="apt-get install apertium apertium-eng-spa"):
        apertium_bitext.run(config)  # a local run: this machine, before Ray


@pytest.mark.slow
def test_the_check_runs_as_a_ray_task(ray_local):
    """The real path: the check travels to a Ray worker and its one-line message comes back."""
    from interlingua.workflows import amr_corpus

    where_it_runs.check_on_cluster(amr_corpus.environment_preflight, amr_corpus.AmrCorpusConfig(languages=[]))
    with pytest.raises(UserError) as caught:
        where_it_runs.check_on_cluster(amr_corpus.environment_preflight, amr_corpus.AmrCorpusConfig(
            languages=[], parser_model="/nowhere/parser"))
    assert str(caught.value) == ("parser_model folder /nowhere/parser does not exist (nor is it a Hugging Face hub "
                                 "id): give a seq2seq AMR parser folder (BART/T5, amrlib parse_xfm) or a hub id "
                                 "(checked on the Ray cluster, where the work runs: its image must provide it)")


def test_address_local_is_a_local_run(monkeypatch):
    """``--address local`` starts a Ray of this machine: its machine checks run here, before Ray, not as a cluster's."""
    from interlingua.core import runtime
    from interlingua.workflows import amr_corpus

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert [where_it_runs.runs_on_cluster(a) for a in ("local", None, "ray://head:10001")] == [False, False, True]
    monkeypatch.setenv("RAY_ADDRESS", "local")
    assert not where_it_runs.runs_on_cluster(None)
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: pytest.fail("Ray started"))
    monkeypatch.setattr(where_it_runs, "on_the_cluster", lambda *a: pytest.fail("checked as a cluster"))
    with pytest.raises(UserError) as caught:
        amr_corpus.run(amr_corpus.AmrCorpusConfig(languages=[], parser_model="/nowhere/parser"), address="local")
    assert str(caught.value).startswith("parser_model folder /nowhere/parser does not exist")
    assert "checked on the Ray cluster" not in str(caught.value)


def test_address_local_starts_the_local_ray(monkeypatch, tmp_path):
    """``init_ray("local")`` took the cluster branch: ``ray.init(address="local")`` without the loopback binding or
    the CPU minimum, a ``$RAY_ADDRESS`` of a cluster checked as the user's choice."""
    import ray

    from interlingua.core import runtime

    class Started(Exception):
        pass

    calls: list = []

    def init(**kwargs):
        calls.append(kwargs)
        raise Started  # what follows the start (the GCS address) needs a real Ray

    for name, value in (("INTERLINGUA_HOME", str(tmp_path)), ("RAY_ADDRESS", "ray://head:10001"),
                        ("TORCH_EXTENSIONS_DIR", str(tmp_path / "ext")), ("DS_ACCELERATOR", "cpu")):
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(runtime, "_loopback_only", lambda: calls.append("loopback"))
    monkeypatch.setattr(runtime, "check_cluster_address", lambda address: pytest.fail(f"checked {address} as a cluster"))
    with pytest.raises(Started):
        runtime.init_ray("local")
    assert calls[0] == "loopback"
    kwargs = calls[1]
    assert (kwargs["address"], kwargs["dashboard_host"], kwargs["num_cpus"]) == ("local", "127.0.0.1",
                                                                                 runtime.local_ray_cpus())
    assert kwargs["runtime_env"]["worker_process_setup_hook"] == "interlingua.core.runtime.setup_local_worker"
    assert runtime.chosen_ray_address("local") is None


@pytest.mark.parametrize("chosen", ["ray://head:10001", "local"])
def test_address_local_keeps_the_clusters_address_from_the_local_rays_workers(monkeypatch, chosen):
    """``--address local`` over ``$RAY_ADDRESS`` of a cluster: the local Ray's processes start without it (workers
    inherit the environment and would keep it, pointing Ray's state API at the cluster)."""
    import ray

    from interlingua.core import runtime

    class _Started(Exception):
        pass

    seen = []

    def start(**kwargs):
        seen.append((kwargs.get("address"), os.environ.get("RAY_ADDRESS")))
        raise _Started

    for name in ("DS_ACCELERATOR", "TORCH_EXTENSIONS_DIR", runtime.OWN_RAY_ADDRESS):
        monkeypatch.setenv(name, "x")
    monkeypatch.setenv("RAY_ADDRESS", chosen)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", start)
    monkeypatch.setattr(runtime, "_loopback_only", lambda: None)
    with pytest.raises(_Started):
        runtime.init_ray("local")
    assert seen == [("local", None)]


def test_a_cluster_address_reaches_ray_with_its_scheme_in_lower_case(monkeypatch, tmp_path):
    """``--address RAY://head:10001`` passes the scheme check (any case) and reached ``ray.init`` as given, which
    Ray's client refuses (it takes ``ray://`` only); it now reaches it as ``ray://head:10001``."""
    from interlingua.core import runtime

    assert _cluster_init_kwargs(monkeypatch, tmp_path, "RAY://head:10001")["address"] == "ray://head:10001"
    assert runtime.scheme_in_lower_case("Head:6379") == "Head:6379"


@pytest.mark.parametrize("address", ["10.0.0.5:6379", "ray://head:10001"])
def test_a_clusters_workers_print_whole_lines_through_the_setup_hook(monkeypatch, tmp_path, address):
    """Only a local Ray's workers ran the setup hook that makes a print one write (a cluster's Ray Data tasks and
    operator actors could still send a blank line to the console); the cluster branch of init_ray now gives Ray it too,
    a module path its workers import."""
    from ray._common.utils import load_class

    from interlingua.core import console, runtime

    runtime_env = _cluster_init_kwargs(monkeypatch, tmp_path, address)["runtime_env"]
    assert load_class(runtime_env["worker_process_setup_hook"]) is console.worker_prints_whole_lines
    assert runtime_env["env_vars"] == runtime.forwarded_env(console.QUIET_ENV)


def test_a_submitted_jobs_runtime_env_keeps_the_workers_setup_hook(tmp_path):
    """A job submitted through the job API (interlingua submit) has a runtime_env of its own; Ray merges the one
    init_ray gives ray.init into it (RAY_OVERRIDE_JOB_RUNTIME_ENV, set by the package, on conflicts), so the cluster's
    workers get the hook as the environment variable Ray's default_worker reads."""
    from ray._private import ray_constants
    from ray._private.runtime_env.setup_hook import upload_worker_process_setup_hook_if_needed
    from ray.runtime_env.runtime_env import _merge_runtime_env

    from interlingua.cluster.job_package import WorkflowJob, build_package
    from interlingua.core import runtime

    job = build_package(WorkflowJob("quickstart", {}, "0.1.0", {"INTERLINGUA_HOME": "/data"}), tmp_path / "job")
    driver = {"env_vars": {"INTERLINGUA_HOME": "/data"}, **runtime.CLUSTER_WORKER_SETUP}
    override = job.runtime_env["env_vars"]["RAY_OVERRIDE_JOB_RUNTIME_ENV"] == "1"
    merged = _merge_runtime_env(job.runtime_env, driver, override=override)
    workers = upload_worker_process_setup_hook_if_needed(merged, worker=None)
    assert (workers["env_vars"][ray_constants.WORKER_PROCESS_SETUP_HOOK_ENV_VAR]
            == runtime.CLUSTER_WORKER_SETUP["worker_process_setup_hook"])


@pytest.mark.parametrize("job_config, ours", [
    ({"runtime_env": {"worker_process_setup_hook": "mine.setup", "env_vars": {"A": "1"}}}, False),
    ({"runtime_env": {"env_vars": {"A": "1"}}}, True),
    (None, True),
])
def test_a_job_with_its_own_setup_hook_keeps_it_alone(monkeypatch, tmp_path, job_config, ours):
    """``ray job submit --runtime-env-json '{"worker_process_setup_hook": ...}' -- interlingua run ...``: Ray refuses
    two hooks (a conflict: the job fails) or, with RAY_OVERRIDE_JOB_RUNTIME_ENV, replaces the user's with ours; the
    user's now stays alone, and a job without one gets ours."""
    import json

    if job_config is None:
        monkeypatch.delenv("RAY_JOB_CONFIG_JSON_ENV_VAR", raising=False)
    else:
        monkeypatch.setenv("RAY_JOB_CONFIG_JSON_ENV_VAR", json.dumps(job_config))
    runtime_env = _cluster_init_kwargs(monkeypatch, tmp_path, "10.0.0.5:6379")["runtime_env"]
    assert ("worker_process_setup_hook" in runtime_env) is ours


def _cluster_init_kwargs(monkeypatch, tmp_path, address: str) -> dict:
    """What init_ray(address) hands ray.init for a cluster (ray.init stopped there, the address not probed)."""
    import ray

    from interlingua.core import runtime

    class Started(Exception):
        pass

    seen = []

    def init(**kwargs):
        seen.append(kwargs)
        raise Started

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(runtime, "check_cluster_address", lambda address: None)
    with pytest.raises(Started):
        runtime.init_ray(address)
    return seen[0]
