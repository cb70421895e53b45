"""``interlingua run absent`` names why a pair was written aside: a side without a known word (``no_known_word``)
and a side whose word vectors sum to the zero vector (``zero_vector``: here two words whose vectors cancel) are
different causes, counted under their own keys and written with their own reason."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def _vectors(path: Path, rows: dict[str, list[float]]) -> str:
    dim = len(next(iter(rows.values())))
    path.write_text(f"{len(rows)} {dim}\n" + "".join(f"{w} {' '.join(map(str, v))}\n" for w, v in rows.items()))
    return str(path)


def test_absent_writes_a_zero_vector_reject_apart_from_a_sentence_without_a_known_word(tmp_path, monkeypatch):
    from interlingua.workflows import absent

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    rng = np.random.default_rng(0)
    en = {f"e{i}": rng.standard_normal(4).round(3).tolist() for i in range(10)}
    en |= {"up": [1.0, 2.0, 0.0, 0.5], "down": [-1.0, -2.0, 0.0, -0.5]}  # "up down" sums to zero
    es = {f"s{i}": rng.standard_normal(4).round(3).tolist() for i in range(10)}
    pairs = [(f"e{i} e{(i + 1) % 10}", f"s{i} s{(i + 1) % 10}") for i in range(10)]
    pairs += [("up down", "s3"), ("nada", "s4")]  # train: a zero sum on the src side; no known word
    pq.write_table(pa.table({"id": [f"p{i}" for i in range(len(pairs))], "src": [p[0] for p in pairs],
                             "tgt": [p[1] for p in pairs]}), tmp_path / "bitext.parquet")
    test = [(f"e{i}", f"s{i}") for i in range(6)] + [("down up up down", "s7")]
    pq.write_table(pa.table({"source": [p[0] for p in test], "target": [p[1] for p in test]}), tmp_path / "test.parquet")
    config = absent.AbsentConfig(
        bitext={"file": str(tmp_path / "bitext.parquet"), "max_pairs": None}, test_file=str(tmp_path / "test.parquet"),
        word_vectors={"src": _vectors(tmp_path / "en.vec", en), "tgt": _vectors(tmp_path / "es.vec", es)},
        weighting="mean", ratios=[1.0], variants=["uni-sent"], train={"batch_size": 4, "epochs": 1, "hidden": [8]})

    summary = absent.run(config)

    assert summary["rejects_by_reason"] == {"train_no_known_word": 1, "train_zero_vector": 1,
                                            "test_no_known_word": 0, "test_zero_vector": 1}
    aside = [json.loads(line) for line in (Path(summary["results"]).parent / "rejected.jsonl").read_text().splitlines()]
    assert [(r["split"], r["id"], r["reason"]) for r in aside] == [
        ("train", "p10", "zero_vector"), ("train", "p11", "no_known_word"), ("test", "6", "zero_vector")]
    assert summary["pairs"] == 10 and summary["test_pairs"] == 6
