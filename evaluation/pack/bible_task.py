"""Bible verse retrieval en–es on the held-out verses (``interlingua.evaluation.splits.bible_heldout_split``)."""

from __future__ import annotations

from pathlib import Path

from interlingua.evaluation.pack.pairs import clean_pair_indices, sample_indices
from interlingua.evaluation.pack.tables import read_table, write_table
from interlingua.evaluation.splits import bible_heldout_split

BIBLE_FILE = "bible-en-es.parquet"


def build_bible_retrieval(assets_dir: Path, out_dir: Path, max_pairs: int, seed: int) -> dict:
    """Write ``bible_retrieval.parquet`` (source=en, target=es, id) from the held-out verses of
    ``assets_dir/bible-en-es.parquet``; return the manifest entry."""
    rows = read_table(assets_dir / BIBLE_FILE)
    heldout = bible_heldout_split(rows["id"])
    ids = [i for i, held in zip(rows["id"], heldout) if held]
    en = [t for t, held in zip(rows["en"], heldout) if held]
    es = [t for t, held in zip(rows["es"], heldout) if held]
    kept, rejected = clean_pair_indices(en, es, min_chars=1)
    kept = sample_indices(kept, max_pairs, seed)
    write_table({"id": [ids[i] for i in kept], "source": [en[i] for i in kept], "target": [es[i] for i in kept]},
                out_dir / "bible_retrieval.parquet")
    return {"name": "bible_retrieval", "kind": "retrieval", "language": "en-es", "file": "bible_retrieval.parquet",
            "size": len(kept), "heldout_verses": len(ids), "rejected": dict(rejected)}
