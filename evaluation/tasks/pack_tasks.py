"""Run one benchmark-pack task (a manifest entry) with an encoder.

Kinds and metrics (percent):
  retrieval   Tatoeba accuracy src->tgt, tgt->src and their average (primary); alignment and uniformity
              (Wang & Isola 2020) of the translation pairs
  mining      BUCC-protocol F1 (primary), precision, recall on the test split, threshold from the sample split
  clustering  K-means + Hungarian accuracy, mean of 3 runs seeded from the run's seed
  title_lead  accuracy of title(en)->lead(xx), title(xx)->lead(en) and their average (primary)
Deterministic kinds give the same value for every seed (their std is 0)."""

from __future__ import annotations

from functools import partial
from pathlib import Path


from interlingua.models.protocol import TextEncoder
from interlingua.evaluation.metrics.alignment_uniformity import alignment_uniformity
from interlingua.evaluation.metrics.clustering import kmeans_clustering_accuracy
from interlingua.evaluation.metrics.mining import bucc_f1, mine_scored_pairs
from interlingua.evaluation.metrics.retrieval import bitext_retrieval_accuracy, nearest_neighbour_accuracy
from interlingua.evaluation.pack.tables import read_table
from interlingua.evaluation.tasks.spec import TaskSpec

PACK_TASK_KINDS = ("retrieval", "mining", "clustering", "title_lead")


def _retrieval(entry: dict, pack: Path, encoder: TextEncoder, seed: int) -> dict[str, float]:
    rows = read_table(pack / entry["file"])
    source, target = encoder.encode(rows["source"]), encoder.encode(rows["target"])
    scores = bitext_retrieval_accuracy(source, target)
    return {"accuracy": scores["average"], "accuracy_src2tgt": scores["src2tgt"], "accuracy_tgt2src": scores["tgt2src"],
            **alignment_uniformity(source, target)}


def _mining(entry: dict, pack: Path, encoder: TextEncoder, seed: int) -> dict[str, float]:
    rows, gold_rows = read_table(pack / entry["file"]), read_table(pack / entry["gold_file"])
    scored, gold = {}, {}
    for split in ("sample", "test"):
        sides = {}
        for side in ("src", "tgt"):
            index = [i for i, (s, d) in enumerate(zip(rows["split"], rows["side"])) if s == split and d == side]
            texts = [rows["text"][i] for i in index]
            sides[side] = ([rows["id"][i] for i in index], encoder.encode(texts), texts)
        scored[split] = mine_scored_pairs(sides["src"][0], sides["src"][1], sides["tgt"][0], sides["tgt"][1],
                                          k=entry.get("k", 4), strategy=entry.get("strategy", "max"),
                                          src_texts=sides["src"][2], tgt_texts=sides["tgt"][2])
        gold[split] = {(a, b) for s, a, b in zip(gold_rows["split"], gold_rows["src_id"], gold_rows["tgt_id"]) if s == split}
    result = bucc_f1(scored["sample"], gold["sample"], scored["test"], gold["test"])
    return {"f1": result["f1"], "precision": result["precision"], "recall": result["recall"]}


def _clustering(entry: dict, pack: Path, encoder: TextEncoder, seed: int) -> dict[str, float]:
    rows = read_table(pack / entry["file"])
    return {"accuracy": kmeans_clustering_accuracy(encoder.encode(rows["text"]), rows["label"], seed=seed, runs=3)}


def _title_lead(entry: dict, pack: Path, encoder: TextEncoder, seed: int) -> dict[str, float]:
    rows = read_table(pack / entry["file"])
    lang = entry["language"].split("-")[1]
    en_to_xx = nearest_neighbour_accuracy(encoder.encode(rows["title_en"]), encoder.encode(rows[f"lead_{lang}"]))
    xx_to_en = nearest_neighbour_accuracy(encoder.encode(rows[f"title_{lang}"]), encoder.encode(rows["lead_en"]))
    return {"accuracy": (en_to_xx + xx_to_en) / 2, f"accuracy_title_en2lead_{lang}": en_to_xx, f"accuracy_title_{lang}2lead_en": xx_to_en}


_RUNNERS = {"retrieval": _retrieval, "mining": _mining, "clustering": _clustering, "title_lead": _title_lead}
PRIMARY_METRIC = {"retrieval": "accuracy", "mining": "f1", "clustering": "accuracy", "title_lead": "accuracy"}


def run_pack_task(entry: dict, pack_dir: str | Path, encoder: TextEncoder, seed: int) -> dict[str, float]:
    """Metrics of one manifest ``entry`` for ``encoder``; the primary one is ``PRIMARY_METRIC[kind]``."""
    kind = entry.get("kind")
    if kind not in _RUNNERS:
        raise ValueError(f"pack task {entry.get('name')!r} has kind {kind!r}; expected one of {PACK_TASK_KINDS}")
    return _RUNNERS[kind](entry, Path(pack_dir), encoder, seed)


def pack_task_specs(pack_dir: str | Path) -> list[TaskSpec]:
    """Every task of the pack's manifest as a :class:`TaskSpec`."""
    from interlingua.evaluation.pack.build import read_manifest

    return [TaskSpec(entry["name"], entry["kind"], entry["language"], PRIMARY_METRIC[entry["kind"]],
                     partial(run_pack_task, entry, pack_dir)) for entry in read_manifest(pack_dir)["tasks"]]
