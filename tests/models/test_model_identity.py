"""Model identity by content (``models/identity.py``) and the embedding cache keyed by it: a model rewritten in
place gets new vectors, the same model in another folder reuses the old ones."""

from __future__ import annotations

import hashlib
import os
import shutil

import numpy as np
import pytest

from interlingua.core.errors import UserError
from interlingua.models.cache import CachedEncoder
from interlingua.models.identity import encoder_identity, files_digest, model_identity
from interlingua.operators.embed_encoder import OperatorEmbedEncoder


def _folder(path, weights: bytes = b"weights"):
    """A fake model folder; 128 positions, so it is read at 128 tokens as it always was (no ``reading_mark``)."""
    (path / "1_Pooling").mkdir(parents=True)
    (path / "config.json").write_text('{"model_type": "bert", "max_position_embeddings": 128}', encoding="utf-8")
    (path / "model.safetensors").write_bytes(weights)
    (path / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}', encoding="utf-8")
    return path


def test_the_digest_is_the_files_paths_and_contents_by_the_published_recipe(tmp_path):
    folder = _folder(tmp_path / "m")
    expected = hashlib.sha256()
    for relative in ("1_Pooling/config.json", "config.json", "model.safetensors"):  # sorted relative POSIX paths
        content = hashlib.sha256((folder / relative).read_bytes()).hexdigest()
        expected.update(f"{relative}\0{content}\n".encode())
    assert files_digest(folder) == expected.hexdigest()
    assert files_digest(folder / "model.safetensors") == hashlib.sha256(b"weights").hexdigest()


def test_a_copy_elsewhere_or_touched_has_the_same_digest_and_any_change_a_new_one(tmp_path):
    folder = _folder(tmp_path / "m")
    digest = files_digest(folder)
    copy = shutil.copytree(folder, tmp_path / "deep" / "other-name")
    os.utime(copy / "model.safetensors", (1, 1))
    assert files_digest(copy) == digest
    (copy / "model.safetensors").write_bytes(b"weightz")
    assert files_digest(copy) != digest
    renamed = shutil.copytree(folder, tmp_path / "renamed")
    (renamed / "model.safetensors").rename(renamed / "pytorch_model.safetensors")
    assert files_digest(renamed) != digest
    extra = shutil.copytree(folder, tmp_path / "extra")
    (extra / "tokenizer.json").write_text("{}", encoding="utf-8")
    assert files_digest(extra) != digest
    with pytest.raises(FileNotFoundError):
        files_digest(tmp_path / "absent")


def test_a_snapshot_that_links_to_its_blobs_has_the_digest_of_the_real_files(tmp_path):
    folder = _folder(tmp_path / "m")
    blobs = tmp_path / "blobs"
    blobs.mkdir()
    snapshot = tmp_path / "snapshot"
    shutil.copytree(folder, snapshot)
    (snapshot / "model.safetensors").rename(blobs / "0a1b")
    (snapshot / "model.safetensors").symlink_to(blobs / "0a1b")
    assert files_digest(snapshot) == files_digest(folder)


def test_model_identity_by_spec_kind(tmp_path):
    folder = _folder(tmp_path / "m")
    digest = files_digest(folder)
    assert model_identity(str(folder)) == model_identity(folder.as_uri()) == f"sha256:{digest}"
    assert model_identity(f"st:{folder}") == f"st:sha256:{digest}"
    words = tmp_path / "vectors.txt"
    words.write_text("1 2\nhola 1 0\n", encoding="utf-8")
    assert model_identity(f"wordvec:{words}") == f"wordvec:sha256:{files_digest(words)}"
    for packaged in ("use", "minilm", "spacy:fr_core_news_md", "py:pkg.mod:make"):
        assert model_identity(packaged) == packaged
    assert model_identity(f"concat(use|{folder})") == f"concat+raw(use|sha256:{digest})"
    assert model_identity(f"norm_concat(use|{folder})") == f"norm_concat(use|sha256:{digest})"
    with pytest.raises(ValueError, match="combination mode 'avg'"):
        model_identity(f"avg(use|{folder})")
    with pytest.raises(UserError, match="does not exist"):
        model_identity(str(tmp_path / "nope"))
    with pytest.raises(UserError, match="does not exist"):
        model_identity(f"st:{tmp_path / 'nope'}")


class _Encoder:
    dim = 2

    def __init__(self, name="enc", source_folder=None):
        self.name, self.calls = name, []
        if source_folder is not None:
            self.source_folder = source_folder

    def encode(self, texts):
        self.calls.append(list(texts))
        return np.full((len(texts), 2), float(len(self.calls)), dtype=np.float32)


def test_the_cache_serves_a_model_rewritten_in_place_new_vectors(tmp_path):
    folder = _folder(tmp_path / "m")
    first = _Encoder(source_folder=folder)
    CachedEncoder(first, tmp_path / "cache").encode(["a", "b"])
    same = _Encoder(source_folder=folder)
    CachedEncoder(same, tmp_path / "cache").encode(["a", "b"])
    assert same.calls == []  # unchanged files: served from the cache
    (folder / "model.safetensors").write_bytes(b"retrained")
    retrained = _Encoder(source_folder=folder)
    cached = CachedEncoder(retrained, tmp_path / "cache")
    cached.encode(["a", "b"])
    assert retrained.calls == [["a", "b"]] and cached.identity == f"enc#sha256:{files_digest(folder)}"
    assert (cached.directory / "encoder.txt").read_text(encoding="utf-8") == f"enc\n{cached.identity}\n"
    assert encoder_identity(_Encoder(name="plain")) == "plain"  # nothing known of its files: its name


def test_the_operator_encoder_is_keyed_by_content_so_a_moved_model_reuses_its_vectors(tmp_path):
    here = _folder(tmp_path / "state-a" / "e5")
    there = shutil.copytree(here, tmp_path / "state-b" / "e5")
    assert OperatorEmbedEncoder(str(here)).identity == OperatorEmbedEncoder(str(there)).identity \
        == f"embed:sha256:{files_digest(here)}"
    assert OperatorEmbedEncoder(str(here), normalize=False).identity == f"embed:sha256:{files_digest(here)}:raw"
    cached = CachedEncoder(OperatorEmbedEncoder(str(here)), tmp_path / "cache")
    moved = CachedEncoder(OperatorEmbedEncoder(str(there)), tmp_path / "cache")
    assert moved.directory == cached.directory
    with pytest.raises(UserError, match="does not exist"):
        OperatorEmbedEncoder(str(tmp_path / "nope")).identity  # a wrong spec fails before Ray starts


def test_a_combination_is_keyed_by_both_parts_content(tmp_path):
    from interlingua.models.combined import CombinedEncoder

    one, two = _folder(tmp_path / "one", b"w1"), _folder(tmp_path / "two", b"w2")
    combined = CombinedEncoder(_Encoder("a", source_folder=one), _Encoder("b", source_folder=two), "norm_concat")
    assert encoder_identity(combined) == \
        f"norm_concat(a#sha256:{files_digest(one)}|b#sha256:{files_digest(two)})"
    cached = CachedEncoder(combined, tmp_path / "cache")
    (two / "model.safetensors").write_bytes(b"w2 retrained")
    again = CombinedEncoder(_Encoder("a", source_folder=one), _Encoder("b", source_folder=two), "norm_concat")
    assert CachedEncoder(again, tmp_path / "cache").directory != cached.directory
    unknown = CombinedEncoder(_Encoder("a", source_folder=one), _Encoder("plain"), "concat")
    assert unknown.identity is None and encoder_identity(unknown) == "concat(a|plain)"  # its name, as before
    unknown.source_folder = two  # a combined folder loaded as a whole: keyed by that folder
    assert encoder_identity(unknown) == f"concat(a|plain)#sha256:{files_digest(two)}"


def test_the_cache_label_masks_credentials_in_an_encoder_name(tmp_path):
    cached = CachedEncoder(_Encoder(name="https://u:hunter2@h/enc?token=abc"), tmp_path / "cache")
    assert (cached.directory / "encoder.txt").read_text(encoding="utf-8") == \
        "https://***@h/enc?token=***\nhttps://***@h/enc?token=***\n"


@pytest.fixture()
def hashed_files(monkeypatch):
    """The files ``_file_sha256`` reads, in order, with this process's digest memo emptied first."""
    from interlingua.models import identity

    read: list[str] = []
    real = identity._file_sha256
    monkeypatch.setattr(identity, "_DIGESTS", {}, raising=False)
    monkeypatch.setattr(identity, "_file_sha256", lambda path: read.append(path.name) or real(path))
    return read


def _written_a_minute_ago(monkeypatch):
    """Hashing starts a minute after the files were written (a change time cannot be set back)."""
    import time

    from interlingua.models import identity

    monkeypatch.setattr(identity, "_now", lambda: time.time() + 60, raising=False)


def test_two_encoders_over_one_unchanged_folder_hash_it_once(tmp_path, hashed_files, monkeypatch):
    folder = _folder(tmp_path / "m")
    _written_a_minute_ago(monkeypatch)
    first = CachedEncoder(_Encoder(source_folder=folder), tmp_path / "cache")
    second = CachedEncoder(_Encoder(source_folder=folder), tmp_path / "cache")
    assert hashed_files == ["config.json", "config.json", "model.safetensors"]  # 1_Pooling/config.json, then ours
    assert first.identity == second.identity == f"enc#sha256:{files_digest(folder)}"
    assert model_identity(str(folder)) == f"sha256:{files_digest(folder)}" and len(hashed_files) == 3  # still once


def test_a_rewritten_folder_is_hashed_again_and_gets_a_new_digest(tmp_path, hashed_files, monkeypatch):
    import time

    folder = _folder(tmp_path / "m", b"weights")
    _written_a_minute_ago(monkeypatch)
    weights = folder / "model.safetensors"
    old = files_digest(folder)
    weights.write_bytes(b"weights v2")  # rewritten in place, another size
    assert files_digest(folder) == _digest_now(folder) != old
    before = weights.stat()
    replacement = folder / "tmp"
    replacement.write_bytes(b"weights v3")  # the same size, moved over the old file: another inode
    os.utime(replacement, ns=(before.st_atime_ns, before.st_mtime_ns))
    replacement.replace(weights)
    assert files_digest(folder) == _digest_now(folder) != old
    before = weights.stat()
    weights.write_bytes(b"weights v4")  # the same size in place, its modification time set back: the change time
    os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))
    while weights.stat().st_ctime_ns == before.st_ctime_ns:  # past the file system's time resolution
        time.sleep(0.01)
        os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert files_digest(folder) == _digest_now(folder)
    (folder / "tokenizer.json").write_text("{}", encoding="utf-8")  # a file added
    assert files_digest(folder) == _digest_now(folder)
    assert hashed_files.count("model.safetensors") == 5  # read again after each change


def test_a_folder_changed_just_now_is_not_remembered(tmp_path, hashed_files):
    folder = _folder(tmp_path / "m")
    assert files_digest(folder) == files_digest(folder)
    assert hashed_files.count("model.safetensors") == 2  # a second write in the same clock tick could hide


def _digest_now(folder) -> str:
    """The folder's digest by the published recipe, read now (no memo)."""
    import hashlib

    expected = hashlib.sha256()
    for file in sorted((f for f in folder.rglob("*") if f.is_file()), key=lambda f: f.relative_to(folder).as_posix()):
        expected.update(f"{file.relative_to(folder).as_posix()}\0{hashlib.sha256(file.read_bytes()).hexdigest()}\n".encode())
    return expected.hexdigest()


def test_a_folder_read_otherwise_than_before_gets_a_new_identity_and_the_others_keep_theirs(tmp_path):
    """A plain Hugging Face folder is now read up to its positions (here 256 tokens, 128 before) and
    ``do_lower_case: true`` is now honoured: their vectors changed, so their identities (the embedding caches' keys,
    ``embed:`` of the operator encoder, eval's ``name#digest``) carry what changed. A folder whose reading did not
    change keeps its key: ours with its max length, the e5-small asset's layout, a registered one
    (sentence-transformers' save with Normalize appended, which writes its length as the tokenizer's limit), and a
    plain folder whose positions were already the limit."""
    import json

    from tiny_models import build_tiny_bert

    from sentence_transformers.sentence_transformer.modules import Normalize

    from interlingua.models.load import load_text_encoder
    from interlingua.models.registry import load_sentence_transformer
    from interlingua.models.resolve import resolve_encoder
    from interlingua.models.sentence_encoder import SentenceEncoder
    from interlingua.workflows.assets.build import E5_MAX_LENGTH, E5_PREFIX

    plain = build_tiny_bert(tmp_path / "plain", max_positions=256)
    digest = files_digest(plain)
    assert model_identity(str(plain)) == f"sha256:{digest}+max_length=256"
    assert OperatorEmbedEncoder(str(plain)).identity == f"embed:sha256:{digest}+max_length=256"
    assert encoder_identity(load_text_encoder(str(plain))) == f"{plain}#sha256:{digest}+max_length=256"
    lower = shutil.copytree(plain, tmp_path / "lower")
    (lower / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128, "do_lower_case": True}))
    assert model_identity(str(lower)) == f"sha256:{files_digest(lower)}+do_lower_case"
    short = build_tiny_bert(tmp_path / "short")  # 64 positions: min(128, 64) before, 64 now
    asset = SentenceEncoder.from_folder(plain, max_length=E5_MAX_LENGTH, prefix=E5_PREFIX).save(tmp_path / "e5")
    registered = tmp_path / "registered"
    model = load_sentence_transformer(SentenceEncoder.from_folder(plain, max_length=128).save(tmp_path / "trained"))
    model.append(Normalize())  # as log_and_register_encoder does
    model.save(str(registered))
    assert "max_seq_length" not in json.loads((registered / "sentence_bert_config.json").read_text())
    for folder in (short, asset, tmp_path / "trained", registered):
        assert model_identity(str(folder)) == f"sha256:{files_digest(folder)}", folder
        assert encoder_identity(load_text_encoder(str(folder))) == f"{folder}#sha256:{files_digest(folder)}", folder
    assert model_identity(f"st:{plain}") == f"st:sha256:{digest}"  # sentence-transformers read it as it does
    assert encoder_identity(resolve_encoder(f"st:{plain}")).endswith(f"#sha256:{digest}")
