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
    assert classify("missing.en") == ("name", "missing.en")


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
    storage = SharedStorage.declare([str(tmp_path / "shared")])
    resolved = {"source": "/home/me/raw.en", "target": str(tmp_path / "shared" / "raw.es"),
                "inputs": ["s3://b/x", "/home/me/y"]}
    with pytest.raises(UserError) as err:
        require_shared_paths(resolved, {}, storage)
    msg = str(err.value)
    assert "source=/home/me/raw.en and inputs[1]=/home/me/y are paths on this machine" in msg
    assert "--shared-path" in msg and "s3://" in msg and "target" not in msg


def test_shared_path_declarations_must_be_folders_not_urls():
    with pytest.raises(UserError, match="--shared-path s3://b"):
        SharedStorage.declare(["s3://b"])
    storage = SharedStorage.declare(["/mnt/data/"])
    assert storage.is_shared("/mnt/data") and storage.is_shared("/mnt/data/x/y")
    assert not storage.is_shared("/mnt/database")


def test_tracking_uri_rules():
    storage = SharedStorage.declare(["/mnt/shared"])
    with pytest.raises(UserError, match="set MLFLOW_TRACKING_URI"):
        require_tracking_uri(None, storage, needed=True)
    assert require_tracking_uri(None, storage, needed=False) is None
    for local in ("sqlite:////home/me/.interlingua/mlflow.db", "file:///home/me/mlruns", "/home/me/mlruns"):
        with pytest.raises(UserError, match="is a file on this machine"):
            require_tracking_uri(local, storage, needed=True)
        assert require_tracking_uri(local, storage, needed=False) is None  # not sent to a job that does not log
    assert require_tracking_uri("sqlite:////mnt/shared/mlflow.db", storage, needed=True)
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
