"""Bible verse retrieval en–es on the held-out verses (``interlingua.evaluation.splits.bible_heldout_split``).

A held-out verse whose English or Spanish text is also that side of a training (non-held-out) verse is no test
verse: the Bible repeats verses, and a model trained on the other verses has seen that text. It is counted under
``rejected`` as ``text_in_training``, as the quickstart's test verses are (:func:`bible_test_indices`)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from interlingua.evaluation.pack.pairs import clean_pair_indices, normalize_text, sample_indices
from interlingua.evaluation.pack.tables import read_table, write_table
from interlingua.evaluation.splits import bible_heldout_split

BIBLE_FILE = "bible-en-es.parquet"


def bible_test_indices(ids: list[str], en: list[str], es: list[str]) -> tuple[list[int], int, Counter]:
    """(indices of the test verses in table order, how many verses are held out, the held-out verses rejected by
    reason): the held-out verses less those with a side too short (empty), a side equal after whitespace
    normalization to that side of a training verse (``text_in_training``) or a side repeating an earlier test
    verse's (``duplicate_text``: an ambiguous retrieval target)."""
    heldout = bible_heldout_split(ids)
    trained = tuple({normalize_text(t) for t, held in zip(side, heldout) if not held} for side in (en, es))
    rows = [i for i, held in enumerate(heldout) if held]
    kept, rejected = clean_pair_indices([en[i] for i in rows], [es[i] for i in rows], min_chars=1, trained=trained)
    return [rows[i] for i in kept], len(rows), rejected


def build_bible_retrieval(assets_dir: Path, out_dir: Path, max_pairs: int, seed: int) -> dict:
    """Write ``bible_retrieval.parquet`` (source=en, target=es, id) from the held-out verses of
    ``assets_dir/bible-en-es.parquet``; return the manifest entry."""
    rows = read_table(assets_dir / BIBLE_FILE)
    kept, heldout, rejected = bible_test_indices(rows["id"], rows["en"], rows["es"])
    kept = sample_indices(kept, max_pairs, seed)
    write_table({"id": [rows["id"][i] for i in kept], "source": [rows["en"][i] for i in kept],
                 "target": [rows["es"][i] for i in kept]}, out_dir / "bible_retrieval.parquet")
    return {"name": "bible_retrieval", "kind": "retrieval", "language": "en-es", "file": "bible_retrieval.parquet",
            "size": len(kept), "heldout_verses": heldout, "rejected": dict(rejected)}
