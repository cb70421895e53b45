"""Run one benchmark-pack task (a manifest entry) with an encoder.

Kinds and metrics (percent):
  retrieval   Tatoeba accuracy src->tgt, tgt->src and their average (primary); alignment and uniformity
              (Wang & Isola 2020) of the translation pairs
  mining      BUCC-protocol F1 (primary), precision, recall on the test split, threshold from the sample split
  clustering  K-means + Hungarian accuracy, mean of 3 runs seeded from the run's seed
  title_lead  accuracy of title(en)->lead(xx), title(xx)->lead(en) and their average (primary)
Deterministic kinds give the same value for every seed (their std is 0). A manifest task of another kind (one a newer
interlingua added) is skipped with one line when selected along with others, refused when it is all that is selected."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from interlingua.core.console import printable
from interlingua.models.protocol import TextEncoder
from interlingua.evaluation.metrics.alignment_uniformity import alignment_uniformity
from interlingua.evaluation.metrics.clustering import kmeans_clustering_accuracy
from interlingua.evaluation.metrics.mining import bucc_f1, mine_scored_pairs
from interlingua.evaluation.metrics.retrieval import bitext_retrieval_accuracy, nearest_neighbour_accuracy
from interlingua.evaluation.pack.rebuild import rebuild_hint
from interlingua.evaluation.pack.tables import read_table
from interlingua.evaluation.tasks.spec import TaskSpec

PACK_TASK_KINDS = ("retrieval", "mining", "clustering", "title_lead")


#: ``embed(texts, language) -> (n, d)``: the encoder, or a language-aware transformation of its vectors.
Embed = Callable[[list, str], np.ndarray]


def _retrieval(entry: dict, pack: Path, embed: Embed, seed: int) -> dict[str, float]:
    rows = read_table(pack / entry["file"])
    src_lang, tgt_lang = entry["language"].split("-")
    source, target = embed(rows["source"], src_lang), embed(rows["target"], tgt_lang)
    scores = bitext_retrieval_accuracy(source, target)
    return {"accuracy": scores["average"], "accuracy_src2tgt": scores["src2tgt"], "accuracy_tgt2src": scores["tgt2src"],
            **alignment_uniformity(source, target)}


def _mining(entry: dict, pack: Path, embed: Embed, seed: int) -> dict[str, float]:
    rows, gold_rows = read_table(pack / entry["file"]), read_table(pack / entry["gold_file"])
    languages = dict(zip(("src", "tgt"), entry["language"].split("-")))
    scored, gold = {}, {}
    for split in ("sample", "test"):
        sides = {}
        for side in ("src", "tgt"):
            index = [i for i, (s, d) in enumerate(zip(rows["split"], rows["side"])) if s == split and d == side]
            texts = [rows["text"][i] for i in index]
            sides[side] = ([rows["id"][i] for i in index], embed(texts, languages[side]), texts)
        scored[split] = mine_scored_pairs(sides["src"][0], sides["src"][1], sides["tgt"][0], sides["tgt"][1],
                                          k=entry.get("k", 4), strategy=entry.get("strategy", "max"),
                                          src_texts=sides["src"][2], tgt_texts=sides["tgt"][2])
        gold[split] = {(a, b) for s, a, b in zip(gold_rows["split"], gold_rows["src_id"], gold_rows["tgt_id"]) if s == split}
    result = bucc_f1(scored["sample"], gold["sample"], scored["test"], gold["test"])
    return {"f1": result["f1"], "precision": result["precision"], "recall": result["recall"]}


def _clustering(entry: dict, pack: Path, embed: Embed, seed: int) -> dict[str, float]:
    rows = read_table(pack / entry["file"])
    return {"accuracy": kmeans_clustering_accuracy(embed(rows["text"], entry["language"]), rows["label"], seed=seed, runs=3)}


def _title_lead(entry: dict, pack: Path, embed: Embed, seed: int) -> dict[str, float]:
    rows = read_table(pack / entry["file"])
    lang = entry["language"].split("-")[1]
    en_to_xx = nearest_neighbour_accuracy(embed(rows["title_en"], "en"), embed(rows[f"lead_{lang}"], lang))
    xx_to_en = nearest_neighbour_accuracy(embed(rows[f"title_{lang}"], lang), embed(rows["lead_en"], "en"))
    return {"accuracy": (en_to_xx + xx_to_en) / 2, f"accuracy_title_en2lead_{lang}": en_to_xx, f"accuracy_title_{lang}2lead_en": xx_to_en}


#: The tables each kind reads (the manifest entry's key naming the file) and the columns it reads from each;
#: title_lead's depend on the language (:func:`_columns_read`).
_TABLE_COLUMNS = {"retrieval": {"file": ("source", "target")},
                  "mining": {"file": ("split", "side", "id", "text"), "gold_file": ("split", "src_id", "tgt_id")},
                  "clustering": {"file": ("text", "label")}}


def _columns_read(entry: dict) -> dict[str, tuple[str, ...]]:
    if entry["kind"] == "title_lead":
        lang = entry["language"].split("-")[1]
        return {"file": ("title_en", f"lead_{lang}", f"title_{lang}", "lead_en")}
    return _TABLE_COLUMNS[entry["kind"]]


def check_pack_task(entry: dict, pack_dir: str | Path) -> None:
    """ValueError (one line naming the file, what it lacks and the rebuild) when a table the task ``entry`` reads is
    missing, not parquet, or lacks a column its kind reads: each table's schema only is read, before any encoder loads."""
    rebuild = rebuild_hint(pack_dir)
    for key, columns in _columns_read(entry).items():
        path = Path(pack_dir) / str(entry.get(key))
        try:
            names = pq.read_schema(path).names
        except FileNotFoundError:
            raise ValueError(f"{path} not found (pack task {entry['name']!r} reads it; {rebuild})") from None
        except (OSError, pa.ArrowException) as err:
            raise ValueError(f"{path} is not a readable parquet table ({err}; {rebuild})") from None
        missing = [column for column in columns if column not in names]
        if missing:
            raise ValueError(f"{path} has no column {', '.join(missing)} (pack task {entry['name']!r}, a {entry['kind']} "
                             f"task, reads {', '.join(columns)}; {rebuild})")


_RUNNERS = {"retrieval": _retrieval, "mining": _mining, "clustering": _clustering, "title_lead": _title_lead}
PRIMARY_METRIC = {"retrieval": "accuracy", "mining": "f1", "clustering": "accuracy", "title_lead": "accuracy"}


def run_pack_task(entry: dict, pack_dir: str | Path, encoder: TextEncoder, seed: int) -> dict[str, float]:
    """Metrics of one manifest ``entry`` for ``encoder``; the primary one is ``PRIMARY_METRIC[kind]``."""
    return run_pack_task_with(entry, pack_dir, lambda texts, language: encoder.encode(texts), seed)


def run_pack_task_with(entry: dict, pack_dir: str | Path, embed: Embed, seed: int) -> dict[str, float]:
    """:func:`run_pack_task` with ``embed(texts, language)`` in place of an encoder: each side's language is
    passed along, so per-language transformations (mean centering, a map to English) can be evaluated."""
    kind = entry.get("kind")
    if kind not in _RUNNERS:
        raise ValueError(f"pack task {entry.get('name')!r} has kind {kind!r}; expected one of {PACK_TASK_KINDS}")
    return _RUNNERS[kind](entry, Path(pack_dir), embed, seed)


def pack_texts(entry: dict, pack_dir: str | Path) -> dict[str, list[str]]:
    """language -> the texts a retrieval or mining task ``entry`` embeds in that language (to embed ahead)."""
    rows = read_table(Path(pack_dir) / entry["file"])
    first, second = entry["language"].split("-")
    if entry.get("kind") == "retrieval":
        return {first: list(rows["source"]), second: list(rows["target"])} if first != second else {first: rows["source"] + rows["target"]}
    if entry.get("kind") == "mining":
        languages = {"src": first, "tgt": second}
        out: dict[str, list[str]] = {}
        for side, text in zip(rows["side"], rows["text"]):
            out.setdefault(languages[side], []).append(text)
        return out
    raise ValueError(f"pack_texts handles retrieval and mining tasks; {entry.get('name')!r} is {entry.get('kind')!r}")


def pack_task_specs(pack_dir: str | Path) -> list[TaskSpec]:
    """Every task of the pack's manifest as a :class:`TaskSpec`, whose check reads its tables' schemas
    (:func:`check_pack_task`); a task of a kind this version does not run is one the runner skips (:func:`_task_spec`)."""
    from interlingua.evaluation.pack.build import read_manifest

    return [_task_spec(entry, pack_dir) for entry in read_manifest(pack_dir)["tasks"]]


def _task_spec(entry: dict, pack_dir: str | Path) -> TaskSpec:
    """The manifest ``entry`` as a task; one of a kind this version does not run (a newer interlingua built the pack)
    as a task the runner skips, or refuses when it is all a pattern selects (``TaskSpec.unsupported``)."""
    if entry["kind"] not in PACK_TASK_KINDS:
        reason = (f"{_where(entry, pack_dir)} has kind {printable(entry['kind'])!r}, which needs a newer interlingua "
                  f"(this one runs {', '.join(PACK_TASK_KINDS)})")
        return TaskSpec(entry["name"], entry["kind"], entry["language"], "", partial(_cannot_run, reason),
                        unsupported=reason)
    _check_entry(entry, pack_dir)
    return TaskSpec(entry["name"], entry["kind"], entry["language"], PRIMARY_METRIC[entry["kind"]],
                    partial(run_pack_task, entry, pack_dir), check=partial(check_pack_task, entry, pack_dir))


def _cannot_run(reason: str, encoder: TextEncoder, seed: int) -> dict[str, float]:
    raise ValueError(reason)


def _where(entry: dict, pack_dir: str | Path) -> str:
    return f"{Path(pack_dir) / 'manifest.json'}: task {printable(entry['name'])!r}"


def _check_entry(entry: dict, pack_dir: str | Path) -> None:
    """ValueError (one line naming the manifest and the task, with the rebuild) when a task between two languages has
    no ``A-B`` language pair."""
    kind, language = entry["kind"], entry["language"]
    where = _where(entry, pack_dir)
    parts = language.split("-")
    if kind != "clustering" and (len(parts) != 2 or not all(parts)):
        raise ValueError(f"{where} is a {kind} task with language {printable(language)!r}, not a pair such as 'en-de'; "
                         f"{rebuild_hint(pack_dir)}")
