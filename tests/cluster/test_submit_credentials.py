"""What ``interlingua submit`` hands to Ray's job API, captured raw (as Ray would store it in its job table and
show it on the dashboard): no credential in the job's environment, and mistakes refused before anything is sent.

Ray's job API is replaced by a recorder of the raw keyword arguments of ``JobsClient.submit`` (no network, no
Ray); the CLI runs in-process through ``interlingua.workflows.cli.main``. The console and the log file are
checked for the secret too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from interlingua.cluster import jobs
from interlingua.workflows.cli import main
from ports import closed_port

SECRET = "S3CRETvalue42"
DROP = ("RAY_ADDRESS", "RAY_API_SERVER_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH",
        "MLFLOW_TRACKING_URI", "INTERLINGUA_HOME")


class _Recorder:
    """Stands in for a connected ``JobsClient``: records what would be sent to Ray, raw."""

    class address:  # noqa: N801 - mirrors JobsClient.address
        shown = "http://fake:8265"

    def __init__(self, calls: list[dict]):
        self.calls = calls

    def submit(self, **kwargs):
        working_dir = kwargs["runtime_env"].get("working_dir")
        config = Path(working_dir, "interlingua-job.yaml").read_text() if working_dir else ""
        self.calls.append({**kwargs, "config_file": config})
        return "raysubmit_fake"


@pytest.fixture
def sent(monkeypatch, tmp_path) -> list[dict]:
    calls: list[dict] = []
    monkeypatch.setattr(jobs.JobsClient, "connect", classmethod(lambda cls, address=None: _Recorder(calls)))
    for name in DROP:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    return calls


def _submit(argv, capsys) -> tuple[int, str]:
    try:
        code = main(["submit", *argv])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.err + captured.out


def _logs(tmp_path) -> str:
    return "".join(p.read_text(errors="replace") for p in (tmp_path / "state" / "logs").glob("*.log"))


def _refused(code: int, out: str, sent: list[dict], tmp_path) -> str:
    """The one error line of a refused submission; nothing was sent and the secret is nowhere."""
    assert code == 2, out
    assert sent == []
    assert "Traceback" not in out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("interlingua submit: error: "), out
    assert SECRET not in out and SECRET not in _logs(tmp_path)
    return lines[0]


@pytest.mark.parametrize("value", [
    f"postgres://u:{SECRET}@db/x",
    f"https://{SECRET}@data.example/x",
    f"https://data.example/x?token={SECRET}",
    f"DefaultEndpointsProtocol=https;AccountName=a;AccountKey={SECRET};EndpointSuffix=core.windows.net",
    f"BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2020-08-04&sig={SECRET}",
])
def test_env_values_carrying_credentials_are_refused_and_not_sent(value, sent, capsys, tmp_path):
    code, out = _submit(["bitext-corpus", "--env", f"DATA={value}"], capsys)
    line = _refused(code, out, sent, tmp_path)
    assert "--env DATA=...: the value carries a credential" in line and "Kubernetes Secret" in line


CARRIES = "=...: the value carries a credential"
NAMED = "is named like a credential and has a value"


@pytest.mark.parametrize("argv, expected", [
    (["--set", f"source=https://u:{SECRET}@data.example/raw.en"], "source" + CARRIES),
    (["--set", f"source=s3://bucket/raw.en?X-Amz-Signature={SECRET}", "--set", "target=s3://bucket/raw.es"],
     "source" + CARRIES),
    (["--set", f"target={SECRET}@minio.internal:9000/raw.es"], "target" + CARRIES),
    (["--set", f"api_token={SECRET}"], f"config key 'api_token' {NAMED}"),
    (["--set", f"storage_options.secret={SECRET}"], f"config key 'storage_options.secret' {NAMED}"),
    (["--set", f"source=https://u:{SECRET}@data.example/raw.en", "--dry-run"], "source" + CARRIES),
])
def test_set_values_carrying_credentials_are_refused_and_not_uploaded(argv, expected, sent, capsys, tmp_path):
    """A ``--set`` value is written into the job's config, which Ray keeps in the job's package: a credential there is
    refused in one line naming the key; a key the config does not know too (its validation error would show the
    value)."""
    code, out = _submit(["bitext-corpus", *argv], capsys)
    line = _refused(code, out, sent, tmp_path)
    assert expected in line and "uploaded with the job" in line and "Kubernetes Secret" in line


@pytest.mark.parametrize("text, expected", [
    (f"source: https://data.example/raw.en?token={SECRET}\ntarget: s3://bucket/raw.es\n", "source" + CARRIES),
    (f"source: s3://bucket/raw.en\ntarget: s3://bucket/raw.es\npassword: {SECRET}\n", f"config key 'password' {NAMED}"),
    (f"source: s3://bucket/raw.en\ntarget: 'DefaultEndpointsProtocol=https;AccountKey={SECRET};'\n", "target" + CARRIES),
])
def test_a_config_files_values_carrying_credentials_are_refused_and_not_uploaded(text, expected, sent, capsys, tmp_path):
    """``-c FILE``: its values are merged into the config the job carries, and checked the same way."""
    (tmp_path / "job.yaml").write_text(text)
    code, out = _submit(["bitext-corpus", "-c", "job.yaml"], capsys)
    line = _refused(code, out, sent, tmp_path)
    assert expected in line and "uploaded with the job" in line


def test_a_config_without_credentials_is_uploaded(sent, capsys, tmp_path):
    (tmp_path / "job.yaml").write_text("source: s3://bucket/raw.en?versionId=3\n")
    code, out = _submit(["bitext-corpus", "-c", "job.yaml", "--set", "target=s3://bucket/raw.es",
                         "--set", "max_tokens=100"], capsys)
    assert code == 0, out
    (call,) = sent
    assert "source: s3://bucket/raw.en?versionId=3" in call["config_file"] and "max_tokens: 100" in call["config_file"]


@pytest.mark.parametrize("uri, what", [
    (f"https://{SECRET}@mlflow.example", "user-info"),
    (f"https://mlflow.example/?token={SECRET}", "(token)"),
    (f"https://mlflow.example/api?x=1&access_token={SECRET}", "(access_token)"),
    (f"https://me:{SECRET}@mlflow.example", "a password"),
])
def test_tracking_uris_carrying_credentials_are_refused_and_not_sent(uri, what, sent, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    code, out = _submit(["quickstart"], capsys)
    line = _refused(code, out, sent, tmp_path)
    assert f"MLflow tracking URI" in line and what in line and "MLFLOW_TRACKING_TOKEN" in line
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    code, out = _submit(["quickstart", "--tracking-uri", uri], capsys)
    _refused(code, out, sent, tmp_path)


def test_a_clean_job_is_sent_with_its_values_unchanged(sent, capsys, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://mlflow.example:5000/?experiment=3")
    code, out = _submit(["quickstart", "--env", "DATA_URL=s3://bucket/x?versionId=3", "--env", "HF_HUB_OFFLINE=1",
                         "--num-cpus", "0.5", "--num-gpus", "0"], capsys)
    assert code == 0, out
    (call,) = sent
    assert call["runtime_env"]["env_vars"] == {"DATA_URL": "s3://bucket/x?versionId=3", "HF_HUB_OFFLINE": "1",
                                               "MLFLOW_TRACKING_URI": "http://mlflow.example:5000/?experiment=3",
                                               "RAY_OVERRIDE_JOB_RUNTIME_ENV": "1"}
    assert call["entrypoint_num_cpus"] == 0.5 and call["entrypoint_num_gpus"] == 0


def test_the_dry_run_shows_what_would_be_sent(sent, capsys, tmp_path):
    code, out = _submit(["bitext-corpus", "--env", "DATA_URL=s3://bucket/x", "--dry-run"], capsys)
    assert code == 0 and sent == []
    shown = json.loads(out[out.index("{"):out.rindex("}") + 1])
    assert shown["runtime_env"]["env_vars"] == {"DATA_URL": "s3://bucket/x", "RAY_OVERRIDE_JOB_RUNTIME_ENV": "1"}
    code, out = _submit(["bitext-corpus", "--env", f"DB=postgres://u:{SECRET}@db/x", "--dry-run"], capsys)
    _refused(code, out, sent, tmp_path)


@pytest.mark.parametrize("argv, expected", [
    (["--set", "source=nothere.en"], "source=nothere.en: no such file here"),
    (["--set", "source=sub/dir/nothere"], "source=sub/dir/nothere: no such file here"),
    (["--num-cpus", "-1"], "--num-cpus -1: the CPUs reserved for the job's driver must be a positive number"),
    (["--num-cpus", "0"], "--num-cpus 0: "),
    (["--num-gpus", "-2"], "--num-gpus -2: the GPUs reserved for the job's driver must be 0 or a positive number"),
    (["--num-cpus", "nan"], "--num-cpus nan: "),
    (["--shared-path", "/nonexistent/share"], "--shared-path /nonexistent/share does not exist on this machine"),
    (["--state-dir", f"s3://bucket/state?sig={SECRET}"], "--state-dir ...: the value carries a credential"),
])
def test_mistakes_are_one_line_before_anything_is_sent(argv, expected, sent, capsys, tmp_path):
    code, out = _submit(["bitext-corpus", *argv], capsys)
    assert expected in _refused(code, out, sent, tmp_path)


def test_a_relative_file_is_found_under_the_shared_path(sent, capsys, tmp_path):
    shared = tmp_path / "share"
    shared.mkdir()
    (shared / "raw.en").write_text("the cat\n")
    (shared / "raw.es").write_text("el gato\n")
    code, out = _submit(["bitext-corpus", "--set", "source=raw.en", "--set", "target=raw.es",
                         "--shared-path", str(shared)], capsys)
    assert code == 0, out
    assert f"source: {shared / 'raw.en'}" in sent[0]["config_file"]
    assert f"target: {shared / 'raw.es'}" in sent[0]["config_file"]



def test_a_scheme_less_user_and_password_in_submits_address_is_masked(capsys, monkeypatch, tmp_path):
    for name in DROP:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    code, out = _submit(["bitext-corpus", "--address", f"u:{SECRET}@127.0.0.1:{closed_port()}"], capsys)
    assert code == 69 and SECRET not in out and "cannot reach the Ray cluster at ***@127.0.0.1:" in out
    assert SECRET not in _logs(tmp_path)


def test_a_scheme_less_user_and_password_in_runs_address_is_masked(tmp_path):
    """``run --address u:pass@host:port``: the error line (core.runtime.check_reachable) and the log file."""
    env = {k: v for k, v in os.environ.items() if k not in DROP}
    env.update(HOME=str(tmp_path / "home"), INTERLINGUA_HOME=str(tmp_path / "state"))
    proc = subprocess.run([sys.executable, "-m", "interlingua.workflows.cli", "run", "quickstart", "--address",
                           f"u:{SECRET}@127.0.0.1:{closed_port()}"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 69, proc.stderr
    assert SECRET not in proc.stdout + proc.stderr
    assert "cannot reach a Ray cluster at ***@127.0.0.1:" in proc.stderr
    assert _logs(tmp_path) and SECRET not in _logs(tmp_path)


def test_a_dry_run_notes_a_missing_shared_path_and_a_submit_refuses_it(sent, capsys, tmp_path):
    """A dry run may check a command meant for a pod that mounts the share (the CronJob's manifest)."""
    code, out = _submit(["bitext-corpus", "--shared-path", "/nonexistent/share", "--dry-run"], capsys)
    assert code == 0 and "note: --shared-path /nonexistent/share is not a folder on this machine" in out
    code, out = _submit(["bitext-corpus", "--shared-path", "/nonexistent/share"], capsys)
    assert "does not exist on this machine" in _refused(code, out, sent, tmp_path)


@pytest.mark.parametrize("command", [["run", "quickstart"], ["refresh", "SPEC"]])
def test_run_and_refresh_on_a_cluster_refuse_a_tracking_uri_with_credentials(command, capsys, monkeypatch, tmp_path):
    """``run`` / ``refresh --address`` forwarded MLFLOW_TRACKING_URI, user-info included, in the driver's runtime_env,
    which the cluster keeps in its job table; ``submit`` already refused it. Refused before anything is read."""
    for name in DROP:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://alice:{SECRET}@127.0.0.1:5999")
    monkeypatch.chdir(tmp_path)
    spec = tmp_path / "spec.yaml"
    spec.write_text("workflow: bitext-corpus\ninputs: [pairs-*.tsv]\nconfig: {src_lang: en, tgt_lang: es}\n")
    monkeypatch.setattr("interlingua.workflows.refresh.refresh", lambda *a, **k: pytest.fail("the refresh ran"))
    argv = [str(spec) if item == "SPEC" else item for item in command]
    code = main([*argv, "--address", f"127.0.0.1:{closed_port()}"])
    out = capsys.readouterr()
    assert code == 2 and SECRET not in out.out + out.err
    assert ("error: MLflow tracking URI http://***@127.0.0.1:5999 carries a password, which would be stored with the "
            "job" in out.err) and "MLFLOW_TRACKING_TOKEN" in out.err
    assert SECRET not in _logs(tmp_path)


def test_the_workers_environment_leaves_out_a_value_that_carries_a_credential(monkeypatch):
    """A local Ray's workers inherit this process's environment; the runtime_env (kept in the job table) need not
    hold the secret. A cluster's is refused before (the test above)."""
    from interlingua.core.runtime import forwarded_env

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://alice:{SECRET}@127.0.0.1:5999")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert "MLFLOW_TRACKING_URI" not in forwarded_env() and forwarded_env()["HF_HUB_OFFLINE"] == "1"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:5999")
    assert forwarded_env()["MLFLOW_TRACKING_URI"] == "http://127.0.0.1:5999"


def test_init_ray_refuses_a_tracking_uri_with_credentials_before_connecting(monkeypatch):
    import ray

    from interlingua.core.errors import UserError
    from interlingua.core.runtime import init_ray

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"https://{SECRET}@mlflow.example")
    monkeypatch.setattr(ray, "init", lambda *a, **k: pytest.fail("ray.init was called"))
    with pytest.raises(UserError, match=r"MLflow tracking URI https://\*\*\*@mlflow.example carries user-info"):
        init_ray(f"127.0.0.1:{closed_port()}")


def test_submit_refresh_ships_the_spec_and_runs_interlingua_refresh_on_it(sent, capsys, tmp_path):
    """`interlingua submit refresh` was "unknown workflow 'refresh'": the documented nightly refresh could not run."""
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "pairs-1.tsv").write_text("a\tb\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"workflow: bitext-corpus\ninputs: ['{tmp_path}/raw/pairs-*.tsv']\n"
                    "config: {src_lang: en, tgt_lang: de}\nkeep_versions: 3\n")
    code, out = _submit(["refresh", "-c", str(spec), "--shared-path", str(tmp_path), "--set", "keep_versions=5"],
                        capsys)
    assert code == 0, out
    (call,) = sent
    assert call["entrypoint"] == "interlingua refresh interlingua-job.yaml"
    assert f"- {tmp_path}/raw/pairs-*.tsv" in call["config_file"] and "keep_versions: 5" in call["config_file"]
    assert call["metadata"]["interlingua.command"] == "refresh" and call["submission_id"].startswith(
        "interlingua-refresh-bitext-corpus-")
    spec.write_text("workflow: bitext-corpus\ninputs: ['/elsewhere/pairs-*.tsv']\nconfig: {src_lang: en, tgt_lang: de}\n")
    code, out = _submit(["refresh", "-c", str(spec), "--shared-path", str(tmp_path)], capsys)
    assert "inputs=/elsewhere/pairs-*.tsv is a path on this machine" in _refused(code, out, sent[1:], tmp_path)


@pytest.mark.parametrize("uri, scheme", [("sqlitex:///x.db", "sqlitex"), ("htp:/mlflow.example", "htp")])
def test_a_tracking_uri_of_a_scheme_mlflow_does_not_take_is_refused_before_submitting(uri, scheme, sent, capsys,
                                                                                      monkeypatch, tmp_path):
    """submit sent a job whose tracking URI MLflow refuses (near miss sqlitex://, typo htp:/): the job failed there."""
    code, out = _submit(["quickstart", "--tracking-uri", uri], capsys)
    assert _refused(code, out, sent, tmp_path).startswith(
        f"interlingua submit: error: the URI scheme '{scheme}' of --tracking-uri={uri} is not one MLflow supports")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    code, out = _submit(["quickstart"], capsys)
    assert f"of MLFLOW_TRACKING_URI={uri} is not one MLflow supports" in _refused(code, out, sent, tmp_path)
