"""The ``hard-negatives`` workflow: which target each pair gets as its negative (the false-negative guards), the
rows without one written aside, the published version, and its refusals."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from interlingua.core.errors import UserError
from interlingua.models.protocol import l2_normalize
from interlingua.operators.corpus.store import CorpusStore
from interlingua.workflows import hard_negatives
from interlingua.workflows.frozen_embeddings import frozen_encoder as real_frozen_encoder
from interlingua.workflows.hard_negatives import mine_hard_negatives


def _unit(rows):
    return l2_normalize(np.asarray(rows, dtype=np.float32), dtype=np.float32)


def test_the_highest_ranked_other_target_under_the_ratio_is_chosen():
    # source i is close to its own target and to target 2; target 1 is nearly a copy of target 0's meaning
    src = _unit([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]])
    tgt = _unit([[1, 0.05, 0], [0.95, 0.1, 0.05], [0.2, 0.1, 1], [1, 1, 0.1]])
    index, score = mine_hard_negatives(src, tgt, ["a", "b", "c", "d"], ["A", "B", "C", "D"], max_ratio=0.95)
    sims = src @ tgt.T
    for i in range(4):
        allowed = [j for j in range(4) if j != i and sims[i, j] < 0.95 * sims[i, i]]
        want = max(allowed, key=lambda j: sims[i, j])  # a reference by brute force
        assert index[i] == want and score[i] == pytest.approx(sims[i, want], abs=1e-6)
    one_row_blocks = mine_hard_negatives(src, tgt, ["a", "b", "c", "d"], ["A", "B", "C", "D"], block_bytes=1)
    assert one_row_blocks[0].tolist() == index.tolist()  # the memory cap changes the blocks, not the result
    # pair 0's nearest other target (1, over 0.95 of the positive's cosine) is too close to be a safe negative
    assert sims[0, 1] >= 0.95 * sims[0, 0] and index[0] != 1


def _pair_with_cosines(positive, candidates):
    """Source 0 and its target at cosine ``positive``, and one pair per candidate cosine whose target has that cosine
    with source 0; every other vector gets a private axis, so nothing else is near source 0."""
    dim = 2 + 2 * len(candidates)
    src, tgt = np.zeros((1 + len(candidates), dim)), np.zeros((1 + len(candidates), dim))
    src[0, 0] = 1.0
    tgt[0, 0], tgt[0, 1] = positive, np.sqrt(1 - positive**2)
    for k, cosine in enumerate(candidates, start=1):
        src[k, 2 * k] = 1.0
        tgt[k, 0], tgt[k, 2 * k + 1] = cosine, np.sqrt(1 - cosine**2)
    return src, tgt


@pytest.mark.parametrize(("positive", "candidates", "want"), [
    (-0.10, [-0.097, -0.2], 2),  # -0.097 is closer to the source than its own target: never a negative
    (-0.10, [-0.104, -0.106], 2),  # the margin is 5 % of |-0.10|: under -0.105
    (0.50, [0.48, 0.47], 2),  # positive cosines: under 0.95 x 0.50 = 0.475, as NV-Retriever's
    (0.50, [0.60, 0.476, 0.474], 3),
    (0.0, [0.0, -0.01], 2),  # a zero positive: strictly below it
])
def test_the_false_negative_guard_holds_for_either_sign_of_the_positive(positive, candidates, want):
    src, tgt = _pair_with_cosines(positive, candidates)
    n = len(src)
    index, score = mine_hard_negatives(src, tgt, [f"s{i}" for i in range(n)], [f"t{i}" for i in range(n)])
    assert index[0] == want and score[0] == pytest.approx(candidates[want - 1], abs=1e-9)
    assert score[0] < positive  # every negative is less similar to the source than its own target


def test_the_guard_matches_a_brute_force_reference_on_random_vectors_of_both_signs():
    rng = np.random.default_rng(5)
    for trial in range(20):
        n, dim = 30, 4
        src = rng.normal(size=(n, dim))
        src /= np.linalg.norm(src, axis=1, keepdims=True)
        tgt = rng.normal(size=(n, dim)) + (0.5 if trial % 2 else -0.5) * src  # positives mostly > 0, or < 0
        tgt /= np.linalg.norm(tgt, axis=1, keepdims=True)
        index, _ = mine_hard_negatives(src, tgt, [f"s{i}" for i in range(n)], [f"t{i}" for i in range(n)], 0.9)
        for i in range(n):
            pos = float(src[i] @ tgt[i])
            limit = pos - 0.1 * abs(pos)
            allowed = [j for j in range(n) if j != i and float(src[i] @ tgt[j]) < limit]
            want = max(allowed, key=lambda j: float(src[i] @ tgt[j])) if allowed else -1
            assert index[i] == want, (trial, i)


def test_targets_of_the_same_source_and_repeated_targets_are_never_negatives():
    src = _unit([[1, 0], [1, 0], [0.8, 0.6], [0, 1]])
    tgt = _unit([[1, 0.1], [1, 0.2], [0.7, 0.7], [0.1, 1]])
    # pairs 0 and 1 share a source (two translations of one sentence); pairs 2 and 3 share a target text
    index, _ = mine_hard_negatives(src, tgt, ["x", "x", "y", "z"], ["X1", "X2", "Y", "Y"], max_ratio=1.0)
    assert index[0] not in (0, 1) and index[1] not in (0, 1)
    # "Y" (pair 2's target, and pair 3's) is the own text of both: each gets X2, the closer of the others
    assert index[2] == 1 and index[3] == 1
    alone, score = mine_hard_negatives(src[:1], tgt[:1], ["x"], ["X"])
    assert alone.tolist() == [-1] and np.isnan(score[0])


class _FakeEncoder:
    name = "fake"

    def __init__(self, spec):
        self.identity = f"fake:{spec}"


def _vectors(texts):
    """A deterministic stand-in for an encoder: the text's number as an angle, so "k" is near "k+1"."""
    angles = np.array([float(t.split()[-1]) for t in texts]) / 2.0
    return np.stack([np.cos(angles), np.sin(angles), np.full(len(texts), 0.1)], axis=1).astype(np.float32)


@pytest.fixture()
def store_with_bitext(tmp_path, monkeypatch):
    from interlingua.workflows import frozen_embeddings

    monkeypatch.setattr(frozen_embeddings, "frozen_encoder", lambda spec, state, address=None: _FakeEncoder(spec))
    monkeypatch.setattr(frozen_embeddings, "embed", lambda encoder, texts, **_: _vectors(texts))
    store = CorpusStore(str(tmp_path / "corpus"))
    n = 6
    table = pa.table({"id": [f"p{i}" for i in range(n + 1)],
                      "src": [f"source {i}" for i in range(n)] + ["lonely 0"],
                      "tgt": [f"target {i}" for i in range(n)] + ["ziel 0"],
                      "src_lang": ["en"] * (n + 1), "tgt_lang": ["es"] * n + ["de"]})
    writer = store.open_version("bt", {"n": n}, ["bt"])
    writer.write_shard("s0", table)
    writer.publish(expected_shards=["s0"])
    return store, tmp_path


def test_the_workflow_adds_neg_writes_aside_pairs_without_one_and_is_deterministic(store_with_bitext):
    store, tmp_path = store_with_bitext
    config = hard_negatives.HardNegativesConfig(corpus="bt", model="fake-model", state_dir=str(tmp_path))
    out = hard_negatives.run(config)
    rows = store.read_table("bt-hn").to_pylist()
    assert out["rows"] == 6 and out["rejects"] == 1
    # the only en -> de pair has no other German target: written aside with its reason, not dropped silently
    rejects = store.read_rejects("bt-hn").to_pylist()
    assert [r["reason"] for r in rejects] == ["no other target in its language pair"] and "lonely 0" in rejects[0]["row"]
    for row in rows:
        k = int(row["src"].split()[-1])
        assert row["neg"] != row["tgt"] and row["neg"].startswith("target ")
        assert abs(int(row["neg"].split()[-1]) - k) == 1  # the neighbouring number: the most similar other target
        source, target = _unit(_vectors([row["src"], row["tgt"]]))
        assert row["neg_cosine"] < 0.95 * float(source @ target)  # under the ratio of the positive's cosine
    assert hard_negatives.run(config)["corpus"] == out["corpus"]  # same inputs and settings: the same version
    stricter = hard_negatives.run(hard_negatives.HardNegativesConfig(corpus="bt", model="fake-model", max_ratio=0.5,
                                                                     state_dir=str(tmp_path)))
    assert stricter["corpus"] != out["corpus"]


def test_the_workflow_refuses_a_corpus_without_bitext_columns(store_with_bitext):
    store, tmp_path = store_with_bitext
    writer = store.open_version("texts", {}, ["texts"])
    writer.write_shard("s0", pa.table({"text": ["a", "b"]}))
    writer.publish(expected_shards=["s0"])
    with pytest.raises(UserError, match=r"lacks columns \['src', 'src_lang', 'tgt', 'tgt_lang'\]"):
        hard_negatives.run(hard_negatives.HardNegativesConfig(corpus="texts", model="m", state_dir=str(tmp_path)))
    hn = hard_negatives.run(hard_negatives.HardNegativesConfig(corpus="bt", model="m", state_dir=str(tmp_path)))
    with pytest.raises(UserError, match="already has a column 'neg'"):
        hard_negatives.run(hard_negatives.HardNegativesConfig(corpus=hn["corpus"], model="m", state_dir=str(tmp_path)))
    with pytest.raises(UserError, match="corpus: .*nope"):
        hard_negatives.run(hard_negatives.HardNegativesConfig(corpus="nope", model="m", state_dir=str(tmp_path)))


def _model_folder(path, weights: bytes):
    path.mkdir()
    (path / "config.json").write_text('{"model_type": "bert"}', encoding="utf-8")
    (path / "model.safetensors").write_bytes(weights)
    return str(path)


def test_the_version_follows_the_encoders_content_not_its_path(store_with_bitext, monkeypatch):
    from interlingua.workflows import frozen_embeddings

    store, tmp_path = store_with_bitext
    monkeypatch.setattr(frozen_embeddings, "frozen_encoder", real_frozen_encoder)  # the real key, no encoding
    here = _model_folder(tmp_path / "here", b"weights v1")
    there = _model_folder(tmp_path / "elsewhere", b"weights v1")

    def version(model):
        return hard_negatives.run(hard_negatives.HardNegativesConfig(corpus="bt", model=model,
                                                                     state_dir=str(tmp_path)))["corpus"]

    first = version(here)
    assert version(there) == first  # the same model in another folder: the same version
    (tmp_path / "here" / "model.safetensors").write_bytes(b"weights v2")
    retrained = version(here)
    assert retrained != first  # rewritten in place: a new version, not the old one reopened
    manifest = store.manifest(*retrained.split("@"))
    assert manifest.config["model"].startswith("embed:sha256:") and str(tmp_path) not in str(manifest.config)


def test_the_version_uses_the_stores_shards_and_reads_back_the_same_rows(store_with_bitext, monkeypatch):
    from pathlib import Path

    from interlingua.operators.corpus.shards import plan_shards

    store, tmp_path = store_with_bitext
    whole = hard_negatives.run(hard_negatives.HardNegativesConfig(corpus="bt", model="m", state_dir=str(tmp_path)))
    monkeypatch.setattr(hard_negatives, "ROWS_PER_SHARD", 3, raising=False)  # 7 source rows: 3 shards, the last of one row
    split = hard_negatives.run(hard_negatives.HardNegativesConfig(corpus="bt", model="m", state_dir=str(tmp_path)))
    assert split["corpus"] != whole["corpus"]  # the shard size is part of the version's config
    manifest = store.manifest(*split["corpus"].split("@"))
    assert [s.shard_id for s in manifest.shards] == [s.id for s in plan_shards(7, 3)] \
        == ["shard-00000", "shard-00001", "shard-00002"]
    assert [Path(p).relative_to(Path(p).parents[1]).as_posix() for p in store.shard_paths(*split["corpus"].split("@"))] \
        == [f"data/shard-0000{k}.parquet" for k in range(3)]  # named and placed as every corpus's shards
    assert [s.rows for s in manifest.shards] == [3, 3, 0]  # the en -> de pair (row 7) is written aside
    assert manifest.config["rows_per_shard"] == 3 and manifest.counters["pairs"] == 7
    # the store's readers give the rows and rejects of the one-shard version, in source order
    assert store.read_table(*split["corpus"].split("@")).to_pylist() == store.read_table(*whole["corpus"].split("@")).to_pylist()
    rejects = [r["row"] for r in store.read_rejects(*split["corpus"].split("@")).to_pylist()]
    assert rejects == [r["row"] for r in store.read_rejects(*whole["corpus"].split("@")).to_pylist()] and len(rejects) == 1
    assert [s.shard_id for s in store.manifest(*whole["corpus"].split("@")).shards] == ["shard-00000"]


def test_case_and_whitespace_variants_of_a_text_are_one_text_to_the_guards():
    """"El  gato " and "el gato" were two candidates: one was the other's pair's negative (a false negative: the
    same translation). Texts are compared by text_key (NFC, whitespace collapsed and stripped, casefolded), sources
    as well as targets."""
    src = _unit([[1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0, 0, 1]])
    tgt = _unit([[1, 0.3, 0], [1, 0.5, 0], [0.5, 1, 0], [0, 0.2, 1]])
    texts = ["the cat", "The  cat ", "the dog", "a bird"], ["el gato", "El  gato ", "el perro", "un pájaro"]
    index, _ = mine_hard_negatives(src, tgt, *texts, max_ratio=1.0)
    assert index[0] not in (0, 1) and index[1] not in (0, 1)  # was 1 and 0: each other's target
    assert hard_negatives.text_key("  Cafe\u0301\tAU  lait ") == "café au lait"


def test_a_candidate_with_the_positives_own_vector_is_not_taken_at_max_ratio_one():
    """With max_ratio 1.0 a target whose vector is the positive's (another text the encoder maps to the same
    vector: a truncated long text) must stay out; the positive's cosine (einsum) and the candidate's (matmul)
    differ by an ulp, so it was taken in about 4 runs of 10."""
    from interlingua.models.protocol import l2_normalize

    rng = np.random.default_rng(0)
    for _ in range(40):
        src = l2_normalize(rng.normal(size=(3, 384)).astype(np.float32), dtype=np.float32)
        t0 = l2_normalize((src[0] + rng.normal(size=384).astype(np.float32))[None], dtype=np.float32)[0]
        other = l2_normalize(rng.normal(size=384).astype(np.float32)[None], dtype=np.float32)[0]
        index, _ = mine_hard_negatives(src, np.stack([t0, t0, other]), ["x", "y", "z"], ["long a", "long b", "otro"],
                                       max_ratio=1.0)
        assert index[0] != 1 and index[1] != 0


def test_a_corpus_the_new_guards_change_gets_a_new_version_and_others_keep_theirs(store_with_bitext):
    store, tmp_path = store_with_bitext
    writer = store.open_version("clean", {}, ["clean"])
    writer.write_shard("s0", pa.table({"id": ["p0", "p1"], "src": ["source 0", "source 3"],
                                       "tgt": ["target 0", "target 3"], "src_lang": ["en"] * 2, "tgt_lang": ["es"] * 2}))
    writer.publish(expected_shards=["s0"])
    plain = hard_negatives.run(hard_negatives.HardNegativesConfig(corpus="clean", model="m", state_dir=str(tmp_path)))
    assert "guards" not in store.manifest(*plain["corpus"].split("@")).config
    writer = store.open_version("variants", {}, ["variants"])
    writer.write_shard("s0", pa.table({"id": ["p0", "p1", "p2"], "src": ["source 0", "source 0.1", "source 3"],
                                       "tgt": ["target 0", "Target  0", "target 3"], "src_lang": ["en"] * 3,
                                       "tgt_lang": ["es"] * 3}))
    writer.publish(expected_shards=["s0"])
    out = hard_negatives.run(hard_negatives.HardNegativesConfig(corpus="variants", model="m", state_dir=str(tmp_path)))
    assert store.manifest(*out["corpus"].split("@")).config["guards"] == ["text_key"]
    assert [row["neg"] for row in store.read_table(*out["corpus"].split("@")).to_pylist()] == ["target 3"] * 2 + \
        ["target 0"]  # not each other's targets
    lone = hard_negatives.run(hard_negatives.HardNegativesConfig(corpus="bt", model="m", state_dir=str(tmp_path)))
    assert store.manifest(*lone["corpus"].split("@")).config["guards"] == ["no_other_target"]  # its reject's reason
