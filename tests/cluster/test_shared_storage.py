"""Shared-storage and tracking checks for remote jobs: pure functions, no Ray."""

from __future__ import annotations

import pytest

from interlingua.core.errors import UserError
from interlingua.cluster.shared_storage import (SharedStorage, changed_values, classify, redact,
                                                require_shared_paths, require_tracking_uri)


@pytest.mark.parametrize("value,kind", [
    ("s3://bucket/raw.parquet", "url"), ("gs://b/x", "url"), ("models:/enc@prod", "url"), ("hf://datasets/x", "url"),
    ("/data/raw.en", "local"), ("./raw.en", "local"), ("~/raw.en", "local"), ("file:///data/raw.en", "local"),
    ("bitext-corpus", "name"), ("en", "name"), ("intfloat/multilingual-e5-small", "name"), ("grow-diag-final-and", "name"),
])
def test_classify_tells_urls_local_paths_and_names_apart(value, kind):
    assert classify(value)[0] == kind


def test_an_existing_relative_file_is_a_local_path_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "raw.en").write_text("x\n")
    assert classify("raw.en") == ("local", str(tmp_path / "raw.en"))
    # a relative value that reads as a file but is not here: a mistake, not a name
    assert classify("missing.en") == ("missing", "missing.en")


def test_only_user_set_values_are_checked_and_relative_shared_paths_become_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "raw.en").write_text("x\n")
    defaults = {"source": None, "default_path": "/opt/pkg/data.jsonl", "train": {"lr": 0.1}}
    resolved = {"source": "raw.en", "default_path": "/opt/pkg/data.jsonl", "train": {"lr": 0.2}}
    assert dict(changed_values(resolved, defaults)) == {"source": "raw.en", "train.lr": 0.2}
    storage = SharedStorage.declare([str(tmp_path)])
    out = require_shared_paths(resolved, defaults, storage)
    assert out["source"] == str(tmp_path / "raw.en")
    assert out["default_path"] == "/opt/pkg/data.jsonl" and out["train"] == {"lr": 0.2}
    assert resolved["source"] == "raw.en"  # the input is not modified


def test_local_paths_outside_shared_mounts_are_refused_naming_every_key(tmp_path):
    (tmp_path / "shared").mkdir()
    storage = SharedStorage.declare([str(tmp_path / "shared")])
    resolved = {"source": "/home/me/raw.en", "target": str(tmp_path / "shared" / "raw.es"),
                "inputs": ["s3://b/x", "/home/me/y"]}
    with pytest.raises(UserError) as err:
        require_shared_paths(resolved, {}, storage)
    msg = str(err.value)
    assert "source=/home/me/raw.en and inputs[1]=/home/me/y are paths on this machine" in msg
    assert "--shared-path" in msg and "s3://" in msg and "target" not in msg


def test_shared_path_declarations_must_be_folders_not_urls(tmp_path):
    with pytest.raises(UserError, match="--shared-path s3://b"):
        SharedStorage.declare(["s3://b"])
    (tmp_path / "data").mkdir()
    storage = SharedStorage.declare([f"{tmp_path}/data/"])
    assert storage.is_shared(f"{tmp_path}/data") and storage.is_shared(f"{tmp_path}/data/x/y")
    assert not storage.is_shared(f"{tmp_path}/database")


def test_shared_path_declarations_must_exist_as_folders(tmp_path):
    with pytest.raises(UserError, match=r"^--shared-path /nonexistent/share does not exist on this machine: .*/mnt/data"):
        SharedStorage.declare(["/nonexistent/share"])
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(UserError, match="is a file, not a folder"):
        SharedStorage.declare([str(tmp_path / "f.txt")])


def test_tracking_uri_rules(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    storage = SharedStorage.declare([str(shared)])
    with pytest.raises(UserError, match="set MLFLOW_TRACKING_URI"):
        require_tracking_uri(None, storage, needed=True)
    assert require_tracking_uri(None, storage, needed=False) is None
    for local in ("sqlite:////home/me/.interlingua/mlflow.db", "file:///home/me/mlruns", "/home/me/mlruns"):
        with pytest.raises(UserError, match="is a file on this machine"):
            require_tracking_uri(local, storage, needed=True)
        assert require_tracking_uri(local, storage, needed=False) is None  # not sent to a job that does not log
    assert require_tracking_uri(f"sqlite:///{shared}/mlflow.db", storage, needed=True)
    assert require_tracking_uri("http://mlflow:5000", storage, needed=True) == "http://mlflow:5000"


def test_credentials_in_uris_are_redacted_in_messages():
    assert redact("http://user:secret@mlflow:5000/x") == "http://***@mlflow:5000/x"
    assert redact("http://mlflow:5000") == "http://mlflow:5000"
    for uri in ("file://user:secret@host/tmp/mlruns", "https://user:secret@mlflow.example.com"):
        with pytest.raises(UserError) as err:
            require_tracking_uri(uri, SharedStorage(), needed=True)
        assert "secret" not in str(err.value) and "***@" in str(err.value)
    with pytest.raises(UserError, match="carries a password"):
        require_tracking_uri("https://user:secret@mlflow.example.com", SharedStorage(), needed=False)


def test_paths_inside_lists_of_sections_are_checked():
    resolved = {"dumps": [{"lang": "en", "url": "/home/me/enwiki.xml.bz2"}, {"lang": "bg", "url": "s3://b/bg.bz2"}]}
    with pytest.raises(UserError, match=r"dumps\[0\]\.url=/home/me/enwiki.xml.bz2 is a path on this machine"):
        require_shared_paths(resolved, {"dumps": []}, SharedStorage())


@pytest.mark.parametrize("value", ["nothere.en", "data/x/raw", "sub/there.es", "corpus.jsonl.gz"])
def test_a_missing_relative_file_is_a_mistake_not_a_name(value, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert classify(value)[0] == "missing"
    with pytest.raises(UserError) as err:
        require_shared_paths({"source": value}, {}, SharedStorage())
    assert str(err.value).startswith(f"source={value}: no such file here") and "\n" not in str(err.value)


@pytest.mark.parametrize("value", ["intfloat/multilingual-e5-small", "Qwen/Qwen2.5-0.5B-Instruct", "en", "v1.0",
                                   "grow-diag-final-and", "zh-Hans", "user@example.com", "a free text. With words"])
def test_names_and_hub_ids_stay_names(value, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert classify(value)[0] == "name"
    assert require_shared_paths({"model": value}, {}, SharedStorage()) == {"model": value}


def test_name_keys_may_hold_dotted_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    resolved = {"experiment": "team.nightly", "src_column": "translation.en", "columns": {"src": "text.en"}}
    assert require_shared_paths(resolved, {}, SharedStorage()) == resolved


def test_a_missing_relative_file_found_under_a_shared_mount_is_made_absolute(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    (shared / "sub").mkdir(parents=True)
    (shared / "sub" / "raw.en").write_text("x\n")
    monkeypatch.chdir(tmp_path)
    out = require_shared_paths({"source": "sub/raw.en"}, {}, SharedStorage.declare([str(shared)]))
    assert out == {"source": str(shared / "sub" / "raw.en")}
    with pytest.raises(UserError, match=f"source=sub/nope.en: no such file here nor under --shared-path {shared}"):
        require_shared_paths({"source": "sub/nope.en"}, {}, SharedStorage.declare([str(shared)]))


@pytest.mark.parametrize("uri, what", [
    ("https://SECRET@mlflow.example", "user-info"),
    ("https://user:SECRET@mlflow.example", "a password"),
    ("https://mlflow.example/?token=SECRET", "query parameter (token)"),
    ("https://mlflow.example/x?lang=en&access_token=SECRET", "query parameter (access_token)"),
    ("https://mlflow.example/?sig=SECRET&sv=1", "query parameter (sig)"),
    ("https://mlflow.example/#api_key=SECRET", "query parameter (api_key)"),
    ("postgresql://SECRET@db/mlflow", "user-info"),
])
def test_tracking_uris_with_any_credential_are_refused_without_showing_it(uri, what):
    for needed in (True, False):
        with pytest.raises(UserError) as err:
            require_tracking_uri(uri, SharedStorage(), needed=needed)
        message = str(err.value)
        assert "SECRET" not in message and what in message and "MLFLOW_TRACKING_TOKEN" in message
    assert require_tracking_uri("https://mlflow.example/?experiment=3", SharedStorage(), needed=True)


def test_scheme_less_user_info_is_redacted_in_messages():
    assert redact("u:SECRET@127.0.0.1:6379") == "***@127.0.0.1:6379"
    assert redact("http://h:8265/?token=SECRET") == "http://h:8265/?token=***"
