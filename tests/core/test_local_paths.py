"""A value as a path on this machine (:mod:`interlingua.core.local_paths`): one reading of ``file://`` for every
caller (a model spec, a recipe's literal folder, ``entity_vectors``), the same place fsspec opens."""

from __future__ import annotations

from pathlib import Path

import pytest

from interlingua.core.errors import UserError
from interlingua.core.local_paths import (exists_here, is_url, local_path, path_or_url, plain_path,
                                         without_file_scheme)

NO_USER = "~no-such-user-here"


@pytest.mark.parametrize("text, expected", [
    ("/srv/m", "/srv/m"), ("file:///srv/m", "/srv/m"),
    ("file://models/m", "models/m"), ("models/m", "models/m"),
    ("file://localhost/srv/m", "localhost/srv/m"),  # fsspec reads no host: a relative folder named localhost
    ("~/m", str(Path.home() / "m")), ("file://~/m", str(Path.home() / "m")),
])
def test_a_path_or_file_url_names_the_place_fsspec_opens(text, expected, tmp_path, monkeypatch):
    from fsspec.implementations.local import LocalFileSystem

    monkeypatch.chdir(tmp_path)
    assert str(local_path(text)) == expected and not is_url(text)
    assert str(local_path(text).absolute()) == LocalFileSystem._strip_protocol(text)


@pytest.mark.parametrize("text", ["s3://bucket/m", "file://s3://bucket/m", "hf://org/name"])
def test_another_url_is_no_local_path(text):
    assert is_url(text) and local_path(text) is None and not exists_here(text)


@pytest.mark.parametrize("text", ["", "a\nb", "x" * 5000, f"{NO_USER}/m", f"file://{NO_USER}/m"])
def test_what_can_be_no_path_here_is_none_not_an_error(text):
    """``~user`` of no user raised RuntimeError from ``expanduser`` in every copy but one."""
    assert local_path(text) is None and not exists_here(text) and not is_url(text)


def test_a_name_too_long_for_the_file_system_exists_nowhere():
    assert local_path("x" * 300) is not None and not exists_here("x" * 300)  # ENAMETOOLONG, not raised


def test_plain_path_reads_no_file_url():
    """``st:`` and ``wordvec:`` take a plain path (the encoder opens ``Path(rest)``): ``st:file:///x`` is none."""
    assert plain_path("file:///x") is None and str(plain_path("/x")) == "/x"
    assert without_file_scheme("file:///x") == "/x" and without_file_scheme("/x") == "/x"


def test_callers_read_a_home_of_no_user_as_no_folder(tmp_path):
    """Each copy of the rule raised RuntimeError ("Could not determine home directory") for ``~nobody/x``: a
    traceback where the user's mistake is one line, or no folder."""
    from interlingua.models.combined import folder_dim
    from interlingua.workflows import amr_corpus, train
    from interlingua.workflows.recipe_models import _local_folder
    from interlingua.workflows.train import TrainWorkflowConfig

    assert folder_dim(f"file://{NO_USER}/m") is None and _local_folder(f"{NO_USER}/m") is None
    config = amr_corpus.AmrCorpusConfig(parser_model=f"file://{NO_USER}/amr", languages=[])
    assert amr_corpus.models_missing_here(config) == [f"file://{NO_USER}/amr"]
    with pytest.raises(UserError, match=rf"train.entity_vectors {NO_USER}/v.txt does not exist"):
        train.check_entity_vectors(TrainWorkflowConfig(
            corpus="e", train={"objective": "ease", "entity_vectors": f"{NO_USER}/v.txt"}).train)


@pytest.mark.parametrize(("text", "recorded"), [
    ("./x.parquet", "x.parquet"), (".//d//x.parquet", "d/x.parquet"), ("d/.", "d"), ("~/x", "~/x"),
    ("memory://b/./x.parquet", "memory://b/./x.parquet"), ("file://./x", "file://./x"), (f"{NO_USER}/x", f"{NO_USER}/x")])
def test_path_or_url_spells_a_plain_path_as_path_does_and_keeps_a_url(text, recorded):
    assert path_or_url(text) == recorded
