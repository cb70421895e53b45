"""Wu & Dredze's own check inside ``run train``: word-retrieval accuracy of aligned word pairs on held-out corpus
rows, for the base and the tuned encoder.

``word_retrieval_rows`` rows of a ``bitext-corpus`` version (made with the encoder's ``subword_tokenizer``) are
drawn with ``word_retrieval_seed`` among the rows that have word pairs and left out of training; the draw depends
only on the corpus version, the count and the seed, so every stage of a recipe on the same corpus holds out (and
is measured on) the same rows, whatever its training seed. The layer is the objective's (``align_layer`` of
``explicit_alignment``; the last layer otherwise); a ``linear`` model is measured through its learned map W
(``alignment_mapping.npz``). See :func:`interlingua.evaluation.tasks.word_retrieval.word_retrieval_accuracy`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from interlingua.core.errors import UserError

#: ``word_retrieval_rows`` when not set: on for ``explicit_alignment``, off for the other objectives.
DEFAULT_ROWS = 500
ID_COLUMN = "id"
TASK = "word_retrieval"
#: How to build a corpus version with word pairs (the hint of every check that misses them).
BUILD_WORD_PAIRS = "interlingua run bitext-corpus --set subword_tokenizer=MODEL_FOLDER"


def wanted_rows(rows: int | None, objective: str) -> int:
    """Held-out rows to draw: ``rows`` as set, else :data:`DEFAULT_ROWS` for explicit_alignment and 0 otherwise."""
    if rows is not None:
        return rows
    return DEFAULT_ROWS if objective == "explicit_alignment" else 0


def word_columns(train, columns: dict[str, str]) -> dict[str, str]:
    """``{src_tokens, tgt_tokens, pairs: corpus column}``: the objective's own column names for explicit_alignment
    (mapped through ``columns``), the bitext-corpus names otherwise."""
    if train.objective == "explicit_alignment":
        o = train.objective_options
        names = {"src_tokens": o.src_tokens_column, "tgt_tokens": o.tgt_tokens_column, "pairs": o.pairs_column}
        return {key: columns.get(name, name) for key, name in names.items()}
    return {"src_tokens": "src_tokens", "tgt_tokens": "tgt_tokens", "pairs": "subword_pairs"}


def word_layer(train) -> int | None:
    """The hidden layer measured: the objective's ``align_layer`` for explicit_alignment, else the last (None)."""
    return train.objective_options.align_layer if train.objective == "explicit_alignment" else None


def check_corpus(rows: int, wanted: dict[str, str], manifest) -> None:
    """One line when the corpus cannot give word-retrieval rows (before Ray or a model starts)."""
    missing = [c for c in (ID_COLUMN, *wanted.values()) if c not in manifest.columns]
    if missing:
        raise UserError(f"word_retrieval_rows={rows} needs a bitext-corpus version made with subword_tokenizer "
                        f"(columns {[ID_COLUMN, *wanted.values()]}); {manifest.name}@{manifest.version} lacks {missing} "
                        f"(set word_retrieval_rows=0, or build one: {BUILD_WORD_PAIRS})")


def select_heldout(store, manifest, rows: int, seed: int, wanted: dict[str, str]) -> dict[str, list]:
    """The held-out rows as columns ``{id, src_tokens, tgt_tokens, subword_pairs}`` (the objective's names mapped
    back to the bitext-corpus ones): ``rows`` drawn with ``seed`` among the rows with at least one word pair, in
    corpus order. A UserError when the ids are not unique or too few rows have pairs."""
    import numpy as np
    import pyarrow.compute as pc

    from interlingua.evaluation.pack.pairs import sample_indices

    table = store.read_table(manifest.name, manifest.version, columns=[ID_COLUMN, *dict.fromkeys(wanted.values())])
    ids = table.column(ID_COLUMN)
    if pc.count_distinct(ids).as_py() != table.num_rows or ids.null_count:
        raise UserError(f"{manifest.name}@{manifest.version}: the '{ID_COLUMN}' column is not unique, so held-out word "
                        f"retrieval rows cannot be told from training rows (set word_retrieval_rows=0)")
    lengths = pc.fill_null(pc.list_value_length(table.column(wanted["pairs"])), 0)
    usable = np.flatnonzero(lengths.to_numpy() > 0).tolist()  # rows with at least one word pair
    if rows >= len(usable):
        raise UserError(f"word_retrieval_rows={rows} leaves nothing to train on: {manifest.name}@{manifest.version} has "
                        f"{len(usable)} rows with word pairs; hold out fewer")
    picked = table.take(sample_indices(usable, rows, seed))
    return {"id": [str(v) for v in picked.column(ID_COLUMN).to_pylist()],
            "src_tokens": picked.column(wanted["src_tokens"]).to_pylist(),
            "tgt_tokens": picked.column(wanted["tgt_tokens"]).to_pylist(),
            "subword_pairs": picked.column(wanted["pairs"]).to_pylist()}


def measure(encoders: dict[str, Any], heldout: dict[str, list], layer: int | None,
            target_maps: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{label: {accuracy, pairs, beyond_length, not_word_start}}`` for each ``{label: SentenceEncoder}``, at the
    encoder's own inference length; ``target_maps[label]`` (y -> W y) for a linear model."""
    from interlingua.evaluation.tasks.word_retrieval import word_retrieval_accuracy

    results = {}
    for label, encoder in encoders.items():
        result = word_retrieval_accuracy(encoder, heldout, layer=layer, max_length=encoder.max_length,
                                         target_map=(target_maps or {}).get(label))
        results[label] = {"accuracy": round(result.accuracy, 4), "pairs": result.pairs,
                          "beyond_length": result.beyond_length, "not_word_start": result.not_word_start}
    return results


def linear_target_map(extras: dict[str, str]):
    """The tuned model's target map and the layer W was learned on, when the objective saved a linear mapping."""
    from interlingua.evaluation.tasks.word_retrieval import mapped_by, read_linear_map
    from interlingua.trainers.objectives.explicit_alignment import MAPPING_FILE

    path = extras.get(MAPPING_FILE)
    if path is None:
        return None, None
    weight, layer = read_linear_map(path)
    return mapped_by(weight), layer


def report(results: dict[str, Any], heldout_ids: list[str], layer: int | None, seed: int, language: str,
           run_id: str | None, out_dir: Path) -> dict[str, Any]:
    """Print the before/after line, write ``word_retrieval.json`` (the document plus the held-out ``ids``) to
    ``out_dir`` and log it and the metrics (``word_retrieval_base``, ``word_retrieval_tuned``,
    ``word_retrieval_pairs``) to ``run_id``; returns the document (the workflow summary's ``word_retrieval``)."""
    heldout_rows = len(heldout_ids)
    document = {"task": TASK, "language": language, "metric": "accuracy", "rows": heldout_rows, "seed": seed,
                "layer": "last" if layer is None else layer, **results}
    base, tuned = results["base"], results["tuned"]
    print(f"  word retrieval (Wu & Dredze), {heldout_rows} held-out rows, layer {document['layer']}, "
          f"{tuned['pairs']} word pairs: base {base['accuracy']:.2f} -> tuned {tuned['accuracy']:.2f} "
          f"({tuned['accuracy'] - base['accuracy']:+.2f})")
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "word_retrieval.json"
    path.write_text(json.dumps({**document, "ids": list(heldout_ids)}, indent=2) + "\n", encoding="utf-8")
    if run_id:
        from mlflow.tracking import MlflowClient

        client = MlflowClient()
        for label in ("base", "tuned"):
            client.log_metric(run_id, f"{TASK}_{label}", results[label]["accuracy"])
        client.log_metric(run_id, f"{TASK}_pairs", tuned["pairs"])
        client.log_artifact(run_id, str(path), "evaluation")
    return document


def card_row(document: dict[str, Any]) -> dict[str, Any]:
    """The result as a row of the evaluation table (model card, recipe results)."""
    base, tuned = document["base"]["accuracy"], document["tuned"]["accuracy"]
    return {"task": TASK, "language": document["language"], "metric": "accuracy", "base": round(base, 2),
            "tuned": round(tuned, 2), "delta": round(tuned - base, 2)}
