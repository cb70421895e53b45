"""What a submitted job is made of (entrypoint, working directory, environment, metadata) and how a
finished job's outcome reads: pure functions, no Ray."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from interlingua.core.errors import UserError
from interlingua.cluster.job_package import (CONFIG_FILE, WorkflowJob, build_package, check_config, check_env,
                                             package_folders)
from interlingua.cluster.jobs import JobState, failure_reason, last_error_line


def test_the_job_runs_the_installed_cli_on_the_shipped_config(tmp_path):
    config = {"source": "s3://b/raw.en", "train": {"lr": 0.001}}
    job = WorkflowJob("bitext-corpus", config, "0.1.0", {"MLFLOW_TRACKING_URI": "http://mlflow:5000"})
    package = build_package(job, tmp_path / "job")
    assert package.entrypoint == f"interlingua run bitext-corpus -c {CONFIG_FILE}"
    assert yaml.safe_load((tmp_path / "job" / CONFIG_FILE).read_text()) == config
    assert package.runtime_env["working_dir"] == str(tmp_path / "job")
    assert package.runtime_env["env_vars"] == {"MLFLOW_TRACKING_URI": "http://mlflow:5000",
                                               "RAY_OVERRIDE_JOB_RUNTIME_ENV": "1"}
    assert package.metadata == {"interlingua.workflow": "bitext-corpus", "interlingua.command": "run",
                                "interlingua.version": "0.1.0", "interlingua.code": "cluster image"}
    assert package.submission_id.startswith("interlingua-bitext-corpus-")
    assert sorted(p.name for p in (tmp_path / "job").iterdir()) == [CONFIG_FILE]


def test_ship_code_puts_the_checkouts_packages_in_the_working_directory(tmp_path):
    package = build_package(WorkflowJob("quickstart", {}, "0.1.0", {}, ship_code=True), tmp_path / "job")
    assert package.entrypoint == f"python -m interlingua.workflows.cli run quickstart -c {CONFIG_FILE}"
    assert package.metadata["interlingua.code"] == "shipped checkout"
    shipped = tmp_path / "job" / "interlingua"
    from interlingua.cluster.job_package import checkout_root

    for name in package_folders(checkout_root()):
        assert (shipped / name.split(".", 1)[1] / "__init__.py").is_file(), name
    assert not list(shipped.rglob("__pycache__"))
    # the shipped tree is importable on its own, ahead of the installed package
    out = subprocess.run([sys.executable, "-c", "import interlingua.cluster.jobs as m; print(m.__file__)"],
                         cwd=tmp_path / "job", capture_output=True, text=True, check=True).stdout
    assert out.strip() == str(shipped / "cluster" / "jobs.py")


@pytest.mark.parametrize("name", ["AWS_SECRET_ACCESS_KEY", "RAY_AUTH_TOKEN", "HF_TOKEN", "DB_PASSWORD"])
def test_secret_looking_variables_are_not_sent(name):
    with pytest.raises(UserError, match="secrets are not sent with a job"):
        check_env({name: "x"})
    assert check_env({"HF_HUB_OFFLINE": "1"}) == {"HF_HUB_OFFLINE": "1"}


@pytest.mark.parametrize("name, value", [
    ("DB_URL", "postgres://u:SECRET@db/x"),
    ("DATA_URL", "https://SECRET@data.example/x"),
    ("DATA_URL", "https://data.example/x?sig=SECRET&sv=1"),
    ("AZURE_STORAGE_CONNECTION_STRING", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=SECRET;"),
    ("SB", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=r;SharedAccessKey=SECRET"),
    ("ODBC", "Driver={x};Server=db;Uid=me;Pwd=SECRET;"),
    ("OPTS", "--password=SECRET"),
    ("RAY_HEAD", "u:SECRET@10.0.0.5:6379"),
    ("AWS_URL", "s3://AKIAIOSFODNN7:wJalrSECRET)@bucket/x"),  # user-info holding ')' (RFC 3986 sub-delims)
    ("DATA_URL", "https://alice:p4ss,SECRET@data.example/x"),
])
def test_variables_whose_values_carry_credentials_are_not_sent(name, value, tmp_path):
    with pytest.raises(UserError) as err:
        check_env({name: value})
    assert "SECRET" not in str(err.value) and f"--env {name}=...: the value carries a credential" in str(err.value)
    assert "Kubernetes Secret" in str(err.value)
    with pytest.raises(UserError):  # build_package checks too: nothing secret reaches runtime_env
        build_package(WorkflowJob("quickstart", {}, "0.1.0", {name: value}), tmp_path / "job")
    plain = {"DATA_URL": "s3://bucket/x?versionId=3", "HF_HUB_OFFLINE": "1", "LANGS": "en,es", "SORT": "sort_key=id"}
    assert check_env(plain) == plain


CARRIES = "=...: the value carries a credential"
NAMED = "is named like a credential and has a value"


@pytest.mark.parametrize("config, expected", [
    ({"source": "https://u:SECRET@data.example/raw.en"}, "source" + CARRIES),
    ({"model": "https://SECRET@hub.example/enc"}, "model" + CARRIES),
    ({"inputs": ["s3://b/a.tsv", "s3://b/b.tsv?X-Amz-Signature=SECRET"]}, "inputs[1]" + CARRIES),
    ({"stages": {"build": {"config": {"source": "SECRET@minio.internal:9000"}}}}, "stages.build.config.source" + CARRIES),
    ({"db": "Server=db;Uid=me;Pwd=SECRET;"}, "db" + CARRIES),
    ({"config": {"storage_options": {"key": "AKIA", "secret": "SECRET"}}}, f"config key 'config.storage_options.key' {NAMED}"),
    ({"train": {"options": {"hf_token": "SECRET"}}}, f"config key 'train.options.hf_token' {NAMED}"),
    ({"password": "SECRET"}, f"config key 'password' {NAMED}"),
])
def test_a_config_value_carrying_a_credential_is_not_uploaded(config, expected, tmp_path):
    """The job's config is a file in its uploaded package: a secret-named key with a value, or a value that carries a
    credential, is refused naming the key (never the value), before the package folder exists."""
    with pytest.raises(UserError) as err:
        check_config(config)
    message = str(err.value)
    assert message.startswith(expected) and "SECRET" not in message and "AKIA" not in message
    assert "uploaded with the job" in message and "Kubernetes Secret" in message and "\n" not in message
    with pytest.raises(UserError):  # build_package checks too
        build_package(WorkflowJob("bitext-corpus", config, "0.1.0", {}), tmp_path / "job")
    assert not (tmp_path / "job").exists()


def test_a_config_without_credentials_is_uploaded_as_it_is(tmp_path):
    config = {"source": "s3://bucket/raw.en?versionId=3", "max_tokens": 256, "sort_key": "id", "password": None,
              "api_key": "", "contact": "me@example.com", "model": "models:/enc@prod", "tokenizer": "org/tok",
              "stages": {"a": {"config": {"inputs": ["/mnt/share/x.tsv"]}}}}
    assert check_config(config) == config
    build_package(WorkflowJob("bitext-corpus", config, "0.1.0", {}), tmp_path / "job")
    assert yaml.safe_load((tmp_path / "job" / CONFIG_FILE).read_text()) == config


def _state(**kw) -> JobState:
    return JobState(job_id="j", status=kw.pop("status", "FAILED"), entrypoint="interlingua run x", **kw)


def test_failure_reasons_read_as_one_line_with_what_to_do():
    assert "driver process was killed (signal 9" in failure_reason(_state(driver_exit_code=-9))
    assert "signal 9" in failure_reason(_state(driver_exit_code=137))
    assert "install interlingua in the cluster's image" in failure_reason(_state(driver_exit_code=127))
    assert "supervisor" in failure_reason(_state(error_type="JOB_SUPERVISOR_ACTOR_DIED", message="x"))
    assert failure_reason(_state(error_type="RUNTIME_ENV_SETUP_FAILURE", message="pip failed\nmore")) == (
        "its runtime environment could not be set up: pip failed")
    assert failure_reason(_state(status="STOPPED")).startswith("it was stopped")
    logs = "Traceback (most recent call last):\n  File x\nValueError: bad thing\nmore output\n"
    assert failure_reason(_state(driver_exit_code=1, message="Job entrypoint command failed"), logs) == (
        "ValueError: bad thing")
    assert last_error_line("ok\ninterlingua run: error: cannot read input: x\n") == (
        "interlingua run: error: cannot read input: x")
    assert failure_reason(_state(driver_exit_code=1, message="Job failed\nlast logs")) == "Job failed"
    fatal = "[quickstart] corpus done\nIntel oneMKL FATAL ERROR: Cannot load libtorch_cpu.so.\n"
    assert failure_reason(_state(driver_exit_code=2, message="Job entrypoint command failed"), fatal) == (
        "Intel oneMKL FATAL ERROR: Cannot load libtorch_cpu.so.")


def _fake_checkout(root):
    """A checkout with one package folder holding code, a new file, git-ignored outputs, a .env and a link."""
    root.mkdir()
    (root / "pyproject.toml").write_text('[tool.setuptools.package-dir]\n"interlingua.core" = "core"\n')
    core = root / "core"
    (core / "sub").mkdir(parents=True)
    (core / "__init__.py").write_text("")
    (core / "sub" / "tracked.py").write_text("X = 1\n")
    (core / "new_module.py").write_text("Y = 2\n")  # written, not added yet: still shipped (git would track it)
    (core / "outputs").mkdir()
    (core / "outputs" / "big.bin").write_bytes(b"0" * 1000)
    (core / ".env").write_text("AWS_SECRET_ACCESS_KEY=SECRET\n")
    (root / "credentials").write_text("SECRET\n")
    (core / "creds.txt").symlink_to(root / "credentials")
    (root / ".gitignore").write_text("outputs/\n")


def test_ship_code_uploads_what_git_would_track_and_never_hidden_files_or_links(tmp_path):
    """--ship-code copied every file below the package folders: a .env, scratch outputs, and through a link any file."""
    from interlingua.cluster.job_package import copy_package_tree

    root = tmp_path / "checkout"
    _fake_checkout(root)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "pyproject.toml", ".gitignore", "core/__init__.py",
                    "core/sub/tracked.py"], check=True)
    shipped = copy_package_tree(tmp_path / "job" / "interlingua", root)
    names = sorted(str(p.relative_to(tmp_path / "job" / "interlingua")) for p in (tmp_path / "job").rglob("*") if p.is_file())
    assert names == ["__init__.py", "core/__init__.py", "core/new_module.py", "core/sub/tracked.py"]
    assert shipped.files == 3 and shipped.left_out == {"git-ignored": 1, "hidden": 1, "links": 1}
    assert "3 files" in shipped.line() and "1 git-ignored, 1 hidden, 1 links" in shipped.line()
    assert not any(b"SECRET" in p.read_bytes() for p in (tmp_path / "job").rglob("*") if p.is_file())


def test_ship_code_in_a_checkout_below_the_top_of_a_git_repository(tmp_path):
    """The checkout's folder need not hold ``.git``: git's own lookup finds the work tree above it (it used to ship the
    git-ignored outputs there)."""
    from interlingua.cluster.job_package import copy_package_tree

    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    root = tmp_path / "repo" / "checkout"
    _fake_checkout(root)
    shipped = copy_package_tree(tmp_path / "job" / "interlingua", root)
    assert shipped.left_out == {"git-ignored": 1, "hidden": 1, "links": 1}
    assert not (tmp_path / "job" / "interlingua" / "core" / "outputs").exists()


def test_ship_code_without_git_still_leaves_out_hidden_files_and_links(tmp_path, monkeypatch):
    from interlingua.cluster.job_package import copy_package_tree

    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # no work tree above, wherever tmp_path is
    root = tmp_path / "checkout"
    _fake_checkout(root)
    shipped = copy_package_tree(tmp_path / "job" / "interlingua", root)
    assert shipped.files == 4 and shipped.left_out["hidden"] == 1 and shipped.left_out["links"] == 1
    assert (tmp_path / "job" / "interlingua" / "core" / "outputs" / "big.bin").is_file()  # no .gitignore reader
    assert not (tmp_path / "job" / "interlingua" / "core" / ".env").exists()
    assert not (tmp_path / "job" / "interlingua" / "core" / "creds.txt").exists()
