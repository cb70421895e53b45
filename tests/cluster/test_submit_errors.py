"""Bad input to ``interlingua submit`` / ``interlingua jobs``: one line naming what is wrong and what to
do, exit 2, no traceback, nothing sent. No Ray cluster: mistakes caught before connecting run in-process;
token and job-id mistakes go through Ray's real job SDK (a subprocess) against a stand-in job API."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time

import pytest

from fake_job_api import TOKEN, fake_job_api
from interlingua.workflows.cli import main
from ports import closed_port

CLIENT_ENV_DROP = ("RAY_ADDRESS", "RAY_API_SERVER_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH",
                   "MLFLOW_TRACKING_URI")



def _main(argv, capsys) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    err = capsys.readouterr().err
    return code, err


def _one_line_error(err: str, command: str = "submit") -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err
    assert lines and lines[0].startswith(f"interlingua {command}: error: "), err
    return lines[0]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    for name in CLIENT_ENV_DROP:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.ray/auth_token of the person running the tests


def test_unknown_workflow_fails_before_anything_is_sent(capsys):
    code, err = _main(["submit", "no-such-flow", "--address", f"http://127.0.0.1:{closed_port()}"], capsys)
    assert code == 2
    assert "unknown workflow 'no-such-flow'; known workflows: " in _one_line_error(err)


def test_unknown_config_key_fails_before_anything_is_sent(capsys):
    code, err = _main(["submit", "bitext-corpus", "--set", "no_such_key=1",
                       "--address", f"http://127.0.0.1:{closed_port()}"], capsys)
    assert code == 2 and "invalid config" in _one_line_error(err) and "no_such_key: unknown key" in err


def test_a_local_path_for_a_remote_job_is_refused_with_the_fix(capsys, tmp_path):
    source = tmp_path / "raw.en"
    source.write_text("the cat\n")
    code, err = _main(["submit", "bitext-corpus", "--set", f"source={source}", "--set", f"target={source}",
                       "--address", f"http://127.0.0.1:{closed_port()}"], capsys)
    line = _one_line_error(err)
    assert code == 2
    assert f"source={source} and target={source} are paths on this machine" in line and "--shared-path" in line
    # declared shared: accepted (the dry run prints the job instead of submitting it)
    code, _ = _main(["submit", "bitext-corpus", "--set", f"source={source}", "--set", f"target={source}",
                     "--shared-path", str(tmp_path), "--dry-run"], capsys)
    assert code == 0


def test_the_local_sqlite_default_is_refused_for_a_workflow_that_logs_to_mlflow(capsys, monkeypatch):
    code, err = _main(["submit", "quickstart", "--dry-run"], capsys)
    assert code == 2 and "set MLFLOW_TRACKING_URI (or --tracking-uri)" in _one_line_error(err)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:////home/me/mlflow.db")
    code, err = _main(["submit", "quickstart", "--dry-run"], capsys)
    assert code == 2 and "is a file on this machine" in _one_line_error(err)


def test_secrets_are_not_sent_in_a_jobs_environment(capsys):
    code, err = _main(["submit", "bitext-corpus", "--env", "AWS_SECRET_ACCESS_KEY=x", "--dry-run"], capsys)
    assert code == 2 and "secrets are not sent with a job" in _one_line_error(err)


def test_unreachable_address_fails_fast_and_names_where_it_came_from(capsys, monkeypatch):
    monkeypatch.setenv("RAY_ADDRESS", f"http://127.0.0.1:{closed_port()}")
    start = time.monotonic()
    code, err = _main(["jobs", "list"], capsys)
    assert time.monotonic() - start < 10
    line = _one_line_error(err, "jobs")
    assert code == 69 and "cannot reach the Ray cluster at http://127.0.0.1:" in line and "($RAY_ADDRESS)" in line
    # an explicit --address wins over RAY_ADDRESS (Ray's SDK would do the opposite)
    code, err = _main(["jobs", "list", "--address", f"http://127.0.0.1:{closed_port()}"], capsys)
    assert "(--address)" in _one_line_error(err, "jobs")


def test_an_unreachable_ray_client_address_names_the_ray_client_port_not_the_dashboards(capsys):
    """The job SDK takes a ray:// address (it asks the Ray Client server there for the dashboard): the port probed is
    the Ray Client server's, and the message said "its dashboard port (10001)"."""
    port = closed_port()
    code, err = _main(["jobs", "list", "--address", f"ray://127.0.0.1:{port}"], capsys)
    line = _one_line_error(err, "jobs")
    assert code == 69 and f"its Ray Client server port ({port}) open" in line and "dashboard port" not in line
    assert line.endswith("the dashboard's URL, http://HEAD:8265")
    code, err = _main(["jobs", "list", "--address", f"http://127.0.0.1:{port}"], capsys)
    line = _one_line_error(err, "jobs")  # the dashboard's URL given: not offered back as the other way
    assert line.endswith(f"its dashboard port ({port}) open to this machine?") and "Or set" not in line


_SCENARIOS = r"""
import contextlib, io, json, os, sys
from interlingua.workflows.cli import main

address, home, token = sys.argv[1:4]
os.environ["HOME"] = home
results = {}

def run(name, argv, **env):
    for key, value in env.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(argv)
    results[name] = [code, err.getvalue()]

# order matters: Ray's auth mode is process state, so "disabled" comes before token mode is turned on
run("disabled", ["jobs", "list", "--address", address], RAY_AUTH_MODE="disabled")
run("missing", ["jobs", "list", "--address", address], RAY_AUTH_MODE=None)
run("wrong", ["jobs", "list", "--address", address], RAY_AUTH_TOKEN="f" * 32)
open(os.path.join(home, ".ray", "auth_token"), "w").write(token)  # the token file Ray reads by default
run("unknown", ["jobs", "status", "raysubmit_nope", "--address", address], RAY_AUTH_TOKEN=None)
run("no-file", ["jobs", "list", "--address", address], RAY_AUTH_TOKEN_PATH=os.path.join(home, "no-such-token"))
print(json.dumps(results))
"""


def test_token_and_job_id_mistakes_against_a_job_api_with_token_auth(tmp_path):
    """Through Ray's real job SDK, one process (importing Ray costs seconds), against the stand-in API."""
    import json

    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k not in CLIENT_ENV_DROP}
    with fake_job_api() as address:
        proc = subprocess.run([sys.executable, "-c", _SCENARIOS, address, str(home), TOKEN], env=env,
                              capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    for code, err in results.values():
        assert code == 2, err
        assert TOKEN not in err and "f" * 32 not in err
    assert "requires a token and none was sent: set RAY_AUTH_TOKEN" in _one_line_error(results["missing"][1], "jobs")
    assert "requires a token" in _one_line_error(results["disabled"][1], "jobs")  # RAY_AUTH_MODE=disabled respected
    # the hint read "$RAY_AUTH_TOKEN: *** the cluster's token": the console masked it as a NAME: secret pair
    assert _one_line_error(results["wrong"][1], "jobs").endswith(
        "rejected the token from $RAY_AUTH_TOKEN (hint - give this machine the cluster's token, printed by "
        "`ray get-auth-token` on the head, in RAY_AUTH_TOKEN or in the file RAY_AUTH_TOKEN_PATH names)")
    # a RAY_AUTH_TOKEN_PATH naming no file read as "none was sent: set ... RAY_AUTH_TOKEN_PATH"
    assert (f"error: RAY_AUTH_TOKEN_PATH names {home}/no-such-token, which is not a file"
            in _one_line_error(results["no-file"][1], "jobs"))
    assert "no job 'raysubmit_nope' on the Ray cluster" in _one_line_error(results["unknown"][1], "jobs")


def test_a_bare_host_port_that_answers_http_is_taken_as_the_dashboard():
    from interlingua.cluster.connection import ClusterAddress, sdk_address

    with fake_job_api() as address:
        bare = address.removeprefix("http://")
        assert sdk_address(ClusterAddress(bare, "--address")) == address  # answers 401: an HTTP server
    # one that does not answer is the dashboard too (Ray's SDK given it bare looked up a GCS for a minute and a half)
    closed = f"127.0.0.1:{closed_port()}"
    assert sdk_address(ClusterAddress(closed, "--address")) == f"http://{closed}"
    assert sdk_address(ClusterAddress("http://h:8265", "--address")) == "http://h:8265"


#: What a Ray GCS (gRPC, HTTP/2) answers an HTTP/1.1 request with: an HTTP/2 SETTINGS frame.
_GCS_ANSWER = b"\x00\x00\x18\x04\x00\x00\x00\x00\x00\x00\x04\x00@\x00\x00\x00\x05\x00@\x00\x00"


@contextlib.contextmanager
def _local_server(answer):
    """A local ``127.0.0.1:PORT`` that hands each connection it accepts to ``answer(connection)``, then closes it."""
    import socket
    import threading

    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            with connection:
                answer(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        server.close()


def _answer_as_a_gcs(connection):
    connection.settimeout(1)
    try:
        connection.recv(4096)
        connection.sendall(_GCS_ANSWER)
    except OSError:  # the probe opens and closes without a request
        pass


@contextlib.contextmanager
def _binary_server():
    """A local ``HOST:PORT`` that answers every connection with :data:`_GCS_ANSWER`, as a GCS does."""
    with _local_server(_answer_as_a_gcs) as address:
        yield address


@contextlib.contextmanager
def _dropping_server():
    """A local ``http://HOST:PORT`` that accepts every connection (the probe passes) and closes it unanswered."""
    with _local_server(lambda connection: None) as address:
        yield f"http://{address}"


def test_a_port_that_accepts_then_drops_the_request_is_not_called_closed(capsys):
    """The probe reached the port, then the job SDK's request was dropped: the line asked "is the head running and its
    dashboard port open to this machine?", which the probe had just answered."""
    with _dropping_server() as address:
        code, err = _main(["jobs", "list", "--address", address], capsys)
    line = _one_line_error(err, "jobs")
    assert code == 69 and line.startswith(f"interlingua jobs: error: the Ray cluster at {address} (--address) "
                                          "accepted the connection, but its job API gave no answer (Ray's SDK: ")
    assert line.endswith("(hint: check that the address is the head's dashboard, e.g. http://HEAD:8265, and that "
                         "the dashboard is up; a proxy in front of it may have no head behind it)")
    assert "port open" not in line and len(err.strip().splitlines()) == 1


def test_a_gcs_address_for_the_job_api_is_one_line_with_the_dashboard_url(capsys, monkeypatch):
    """It printed ``failed: BadStatusLine: <binary bytes>`` and exited 1."""
    with _binary_server() as gcs:
        monkeypatch.setenv("RAY_ADDRESS", gcs)
        code, err = _main(["jobs", "list"], capsys)
        assert code == 2 and _one_line_error(err, "jobs") == (
            f"interlingua jobs: error: cluster address {gcs} ($RAY_ADDRESS) answers, but not in HTTP: not the "
            "dashboard's job API that `interlingua jobs` and `submit` talk to (a GCS address, HOST:6379, is what "
            "`run --address` takes); give the dashboard's URL, e.g. http://HEAD:8265")
        assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("address", ["htp://127.0.0.1:8265", "Htp://127.0.0.1:8265", "tcp://127.0.0.1:8265"])
@pytest.mark.parametrize("source", ["--address", "$RAY_ADDRESS"])
def test_a_scheme_no_job_client_speaks_is_one_line_before_any_connection(capsys, monkeypatch, address, source):
    """``htp://`` printed Ray's two-line ``RuntimeError: Module: htp does not exist.`` and exited 1."""
    monkeypatch.setattr("interlingua.cluster.connection.unreachable",
                        lambda *a, **k: pytest.fail("the address was probed before its scheme was checked"))
    if source == "--address":
        code, err = _main(["jobs", "list", "--address", address], capsys)
    else:
        monkeypatch.setenv("RAY_ADDRESS", address)
        code, err = _main(["jobs", "list"], capsys)
    scheme = address.partition("://")[0].lower()
    address = address.replace("Htp", "htp")  # shown as a URL: its scheme in lower case
    assert code == 2 and _one_line_error(err, "jobs") == (
        f"interlingua jobs: error: cluster address {address} ({source}): {scheme}:// is not a scheme the job API "
        "takes; use http:// or https:// (the dashboard, e.g. http://HEAD:8265) or ray:// (Ray Client, e.g. "
        "ray://HEAD:10001)")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("address", ["htp://127.0.0.1:8265", "Htp://127.0.0.1:6379", "tcp://u:pw@127.0.0.1:6379"])
@pytest.mark.parametrize("source", ["--address", "$RAY_ADDRESS"])
def test_run_refuses_a_scheme_ray_does_not_take_with_the_forms_it_takes(capsys, monkeypatch, tmp_path, address, source):
    """``run --address htp://HOST:8265`` was probed as if the scheme were right and exited 69 with "cannot reach a Ray
    cluster"; the one scheme check `jobs` and `submit` make (core.runtime.ray_address_scheme) refuses it first."""
    import ray

    monkeypatch.setattr("interlingua.core.net.unreachable",
                        lambda *a, **k: pytest.fail("the address was probed before its scheme was checked"))
    monkeypatch.setattr(ray, "init", lambda *a, **k: pytest.fail("Ray started"))
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    if source == "--address":
        code, err = _main(["run", "quickstart", "--address", address], capsys)
    else:
        monkeypatch.setenv("RAY_ADDRESS", address)
        code, err = _main(["run", "quickstart"], capsys)
    scheme = address.partition("://")[0].lower()
    shown = address.replace("Htp", "htp").replace("u:pw@", "***@")
    assert code == 2 and _one_line_error(err, "run") == (
        f"interlingua run: error: cluster address {shown} ({source}): {scheme}:// is not a scheme Ray takes; use "
        "HOST:PORT (the cluster's GCS, e.g. 10.0.0.5:6379) or ray:// (Ray Client, e.g. ray://HEAD:10001)")
    assert len(err.strip().splitlines()) == 1


def test_submit_refuses_a_scheme_the_job_api_does_not_take(capsys, monkeypatch):
    monkeypatch.setattr("interlingua.cluster.connection.unreachable",
                        lambda *a, **k: pytest.fail("the address was probed before its scheme was checked"))
    code, err = _main(["submit", "bitext-corpus", "--set", "source=s3://b/raw.en", "--set", "target=s3://b/raw.es",
                       "--address", "htp://127.0.0.1:8265"], capsys)
    assert code == 2 and "Traceback" not in err and _one_line_error(err, "submit").startswith(  # before any note
        "interlingua submit: error: cluster address htp://127.0.0.1:8265 (--address): htp:// is not a scheme the job API takes; use http:// or "
        "https://")


def test_refresh_given_a_job_api_url_points_at_submit_refresh(capsys, tmp_path):
    """It suggested `interlingua submit --address URL`, which cannot run a refresh."""
    spec = tmp_path / "spec.yaml"
    spec.write_text("workflow: bitext-corpus\ninputs: [pairs-*.tsv]\nconfig: {src_lang: en, tgt_lang: es}\n")
    code, err = _main(["refresh", str(spec), "--address", "http://127.0.0.1:8265"], capsys)
    assert code == 2 and _one_line_error(err, "refresh").endswith(
        "`refresh` needs the cluster's GCS address (HOST:6379), or submit it as a job with "
        "`interlingua submit refresh -c SPEC.yaml --address http://127.0.0.1:8265`")


def test_refresh_checks_its_address_before_fingerprinting_the_inputs(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr("interlingua.operators.corpus.input_fingerprints.build_fingerprints",
                        lambda urls: pytest.fail("inputs were fingerprinted before the address was checked"))
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    (tmp_path / "pairs-1.tsv").write_text("a\tb\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"workflow: bitext-corpus\ninputs: ['{tmp_path}/pairs-*.tsv']\nconfig: {{src_lang: en, tgt_lang: es}}\n")
    code, err = _main(["refresh", str(spec), "--address", f"127.0.0.1:{closed_port()}"], capsys)
    assert code == 69 and "cannot reach a Ray cluster at 127.0.0.1:" in _one_line_error(err, "refresh")


def test_a_scheme_in_capitals_is_taken_in_lower_case():
    """Schemes are case-insensitive; Ray's job SDK imports ``HTTP`` as a module, so it gets ``http``."""
    from interlingua.cluster.connection import resolve_address

    assert resolve_address("HTTP://Head:8265/").url == "http://Head:8265"
    assert resolve_address("head:8265").url == "head:8265"
