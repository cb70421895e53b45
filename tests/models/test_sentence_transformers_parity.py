"""A model folder embeds as ``SentenceTransformer(folder).encode`` embeds it: through ``--model`` specs
(``resolve_encoder``, what ``interlingua embed`` and ``eval`` load) and the ``embed`` command itself. Each folder is
a tiny random BERT, written as a plain Hugging Face folder or with the sentence-transformers module files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tiny_models import SENTENCES, build_tiny_bert

#: 6 x 15 + 96 = 186 word tokens: past the 128 tokens a folder used to be cut at, within the 256 positions below.
LONG = " ".join(["the cat sits on the mat and the dog runs on the big red mat"] * 6 + ["the"] * 96)
POSITIONS = 256


def st_folder(base: Path, folder: Path, *, pooling: str = "mean", normalize: bool = False,
              max_seq_length: int | None = None, do_lower_case: bool = False, prompt: str = "",
              include_prompt: bool = True) -> Path:
    """``base`` (a plain HF folder) with sentence-transformers module files written by hand, so each setting is
    exactly what the test says (sentence-transformers' own save would fill in the ones left out)."""
    shutil.copytree(base, folder)
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
        (folder / "2_Normalize").mkdir()
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(
        {"embedding_dimension": 32, "pooling_mode": pooling, "include_prompt": include_prompt}))
    sbert = {"do_lower_case": do_lower_case}
    if max_seq_length is not None:
        sbert["max_seq_length"] = max_seq_length
    (folder / "sentence_bert_config.json").write_text(json.dumps(sbert))
    prompts = {"query": prompt} if prompt else {}
    (folder / "config_sentence_transformers.json").write_text(json.dumps(
        {"prompts": prompts, "default_prompt_name": "query" if prompt else None, "similarity_fn_name": "cosine"}))
    return folder


def sentence_transformers_vectors(folder: Path, texts: list[str], normalize: bool = False) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    return model.encode(texts, convert_to_numpy=True, normalize_embeddings=normalize)


def our_vectors(folder: Path, texts: list[str], normalize: bool = False) -> np.ndarray:
    from interlingua.models.encode import encode_texts
    from interlingua.models.resolve import resolve_encoder

    return encode_texts(resolve_encoder(str(folder)), texts, batch_size=4, normalize=normalize)


@pytest.fixture(scope="module")
def long_bert(tmp_path_factory) -> Path:
    """256 positions, a tokenizer that names no limit (transformers writes a huge ``model_max_length``)."""
    return build_tiny_bert(tmp_path_factory.mktemp("long") / "bert", max_positions=POSITIONS)


def test_a_folder_without_max_seq_length_reads_what_its_tokenizer_and_positions_allow(long_bert, tmp_path):
    """sentence-transformers truncates at min(tokenizer model_max_length, max_position_embeddings); a plain HF
    folder and a module folder whose tokenizer says "no limit" were cut at 128 tokens, and a tokenizer's own limit
    is capped by the positions. 128 stays for a folder where neither says."""
    from interlingua.models.load import load_encoder

    texts = [LONG, *SENTENCES]
    folders = {"plain": long_bert, "modules": st_folder(long_bert, tmp_path / "modules")}
    limited = st_folder(long_bert, tmp_path / "limited")
    tokenizer_config = json.loads((limited / "tokenizer_config.json").read_text())
    (limited / "tokenizer_config.json").write_text(json.dumps({**tokenizer_config, "model_max_length": 100}))
    folders["limited"] = limited
    lengths = {"plain": POSITIONS, "modules": POSITIONS, "limited": 100}
    for name, folder in folders.items():
        assert load_encoder(str(folder)).max_length == lengths[name], name
        np.testing.assert_allclose(our_vectors(folder, texts), sentence_transformers_vectors(folder, texts),
                                   atol=1e-6, rtol=1e-5, err_msg=name)
    from interlingua.models.sentence_encoder import _settings

    assert _settings({}, None)["max_length"] == 128  # nothing says: no tokenizer limit, no positions


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> Path:
    return build_tiny_bert(tmp_path_factory.mktemp("tiny") / "bert")


def embed_command(folder: Path, texts: list[str], out: Path, *options: str) -> np.ndarray:
    """``interlingua embed --model FOLDER TEXTS --out OUT OPTIONS``'s vectors."""
    from interlingua.workflows.cli import main

    assert main(["embed", "--model", str(folder), *texts, "--out", str(out), *options]) == 0
    return np.load(out, allow_pickle=False)


def test_no_normalize_keeps_the_models_own_normalize_module(bert, tmp_path, monkeypatch):
    """``--no-normalize`` leaves out our extra L2 normalization only: a folder whose modules end in ``Normalize``
    (all-MiniLM's layout; the registry appends one) still gives unit vectors, as sentence-transformers does, and
    ``save`` keeps the module; a folder without one gives its raw pooled vectors."""
    from interlingua.models.sentence_encoder import SentenceEncoder

    monkeypatch.setenv("INTERLINGUA_LOG_FILE", "")
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    texts = list(SENTENCES)
    normalized = st_folder(bert, tmp_path / "normalized", normalize=True)
    raw = st_folder(bert, tmp_path / "raw")
    expected = sentence_transformers_vectors(normalized, texts)
    np.testing.assert_allclose(np.linalg.norm(expected, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(embed_command(normalized, texts, tmp_path / "n.npy", "--no-normalize"), expected,
                               atol=1e-6, rtol=1e-5)
    raw_vectors = embed_command(raw, texts, tmp_path / "r.npy", "--no-normalize")
    np.testing.assert_allclose(raw_vectors, sentence_transformers_vectors(raw, texts), atol=1e-6, rtol=1e-5)
    assert np.abs(np.linalg.norm(raw_vectors, axis=1) - 1.0).max() > 1e-2
    resaved = SentenceEncoder.from_folder(normalized).save(tmp_path / "resaved")
    np.testing.assert_allclose(our_vectors(resaved, texts), sentence_transformers_vectors(resaved, texts),
                               atol=1e-6, rtol=1e-5)
    np.testing.assert_allclose(our_vectors(resaved, texts), expected, atol=1e-6, rtol=1e-5)


def test_do_lower_case_lowercases_the_input_and_the_prompt(tmp_path):
    """``do_lower_case: true`` in ``sentence_bert_config.json``: sentence-transformers lowercases what its
    tokenizer reads, prompt included; with a cased tokenizer "The Cat" was read as [UNK] [UNK]. A folder we save
    from it lowercases alike."""
    from interlingua.models.sentence_encoder import SentenceEncoder

    cased = build_tiny_bert(tmp_path / "cased", lowercase=False)
    folder = st_folder(cased, tmp_path / "lower", do_lower_case=True, prompt="Query: ")
    texts = [text.title() for text in SENTENCES] + [text.upper() for text in SENTENCES]
    expected = sentence_transformers_vectors(folder, texts)
    np.testing.assert_allclose(our_vectors(folder, texts), expected, atol=1e-6, rtol=1e-5)
    np.testing.assert_allclose(expected[:len(SENTENCES)], expected[len(SENTENCES):], atol=1e-6, rtol=1e-5)
    resaved = SentenceEncoder.from_folder(folder).save(tmp_path / "resaved")
    unit = sentence_transformers_vectors(folder, texts, normalize=True)  # a saved folder ends in Normalize
    np.testing.assert_allclose(sentence_transformers_vectors(resaved, texts), unit, atol=1e-6, rtol=1e-5)
    np.testing.assert_allclose(our_vectors(resaved, texts), unit, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("pooling, include_prompt", [("lasttoken", True), ("weightedmean", True),
                                                     ("mean_sqrt_len_tokens", True), ("mean", False)])
def test_a_pooling_our_encoder_does_not_compute_runs_through_sentence_transformers(bert, tmp_path, pooling,
                                                                                    include_prompt):
    """``embed`` and ``eval`` (``--model`` specs) hand such a folder to sentence-transformers (as they do a Dense
    head) instead of refusing it; ``load_encoder``, which must give a trainable ``SentenceEncoder``, still refuses
    it in one line pointing at them."""
    from interlingua.core.errors import UserError
    from interlingua.models.load import load_encoder

    folder = st_folder(bert, tmp_path / pooling, pooling=pooling, prompt="query: ", include_prompt=include_prompt)
    texts = list(SENTENCES)
    for normalize in (False, True):
        np.testing.assert_allclose(our_vectors(folder, texts, normalize), sentence_transformers_vectors(
            folder, texts, normalize), atol=1e-6, rtol=1e-5)
    with pytest.raises(UserError, match="runs through sentence-transformers"):
        load_encoder(str(folder))


def test_concat_combines_the_pooled_vectors_of_a_part_whose_folder_normalizes(bert, tmp_path, monkeypatch):
    """``concat`` and ``sum`` combine their parts' raw outputs (``+raw`` identities): a part folder ending in
    ``Normalize`` (every registered plain encoder) gave unit vectors there too once ``embed --no-normalize`` kept the
    module, so concat was norm_concat. Its pooled vectors (those of the same folder without the module) again,
    saved and reloaded as ``combine`` does and through ``embed``; ``embed --no-normalize`` of the part alone still
    gives unit vectors."""
    from interlingua.models.combined import CombinedEncoder
    from interlingua.models.load import load_encoder

    monkeypatch.setenv("INTERLINGUA_LOG_FILE", "")
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    texts = list(SENTENCES)
    normalized = st_folder(bert, tmp_path / "normalized", normalize=True)
    other = build_tiny_bert(tmp_path / "other", seed=1)
    pooled = sentence_transformers_vectors(st_folder(bert, tmp_path / "raw"), texts)
    assert np.abs(np.linalg.norm(pooled, axis=1) - 1.0).max() > 1e-2
    expected = np.concatenate([pooled, load_encoder(str(other)).encode(texts, normalize=False)], axis=1)
    saved = CombinedEncoder(load_encoder(str(normalized)), load_encoder(str(other)), "concat").save(tmp_path / "c")
    np.testing.assert_allclose(load_encoder(str(saved)).encode(texts), expected, atol=1e-6, rtol=1e-5)
    np.testing.assert_allclose(embed_command(f"concat({normalized}|{other})", texts, tmp_path / "c.npy",
                                             "--no-normalize"), expected, atol=1e-6, rtol=1e-5)
    alone = embed_command(normalized, texts, tmp_path / "n.npy", "--no-normalize")
    np.testing.assert_allclose(np.linalg.norm(alone, axis=1), 1.0, atol=1e-6)
