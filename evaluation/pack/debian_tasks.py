"""debian-reference tasks: paragraph retrieval en–{de,fr,es} and BUCC-style mining.

Mining construction (per language, one ``sample`` and one ``test`` split over disjoint paragraphs):
``gold`` aligned paragraph pairs; ``orphans`` pairs of which only one side is kept (so a true
translation of it is absent), on each side; plus Wikipedia lead paragraphs as distractors on the
English side and, for fr/es, on the foreign side. Ids are BUCC-like (``fr-000001`` / ``en-000001``)
and each side is shuffled."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from interlingua.evaluation.pack.pairs import clean_pair_indices, sample_indices
from interlingua.evaluation.pack.tables import read_table, write_table
from interlingua.evaluation.pack.wiki_offline import WIKI_LANGUAGES, load_wiki_articles

DEBIAN_LANGUAGES = ("de", "fr", "es")
MIN_PARAGRAPH_CHARS = 40


def find_debian_file(assets_dir: Path, lang: str) -> Path | None:
    """The debian-reference parquet for ``lang`` in ``assets_dir`` (a name containing 'debian' and
    '-{lang}' or '_{lang}'), or None."""
    for path in sorted(assets_dir.glob("*.parquet")):
        stem = path.stem.lower()
        if "debian" in stem and "reject" not in stem and (stem.endswith(f"-{lang}") or stem.endswith(f"_{lang}") or f"-{lang}." in stem or f"en-{lang}" in stem):
            return path
    return None


def load_debian_pairs(path: Path) -> tuple[list[str], list[str], list[str], dict]:
    """(ids, en, tgt, rejected counts) of clean paragraph pairs from a parquet with columns id, section, en, tgt."""
    rows = read_table(path)
    kept, rejected = clean_pair_indices(rows["en"], rows["tgt"], MIN_PARAGRAPH_CHARS)
    return [str(rows["id"][i]) for i in kept], [rows["en"][i] for i in kept], [rows["tgt"][i] for i in kept], dict(rejected)


def build_debian_retrieval(path: Path, lang: str, out_dir: Path, max_pairs: int, seed: int) -> dict:
    ids, en, tgt, rejected = load_debian_pairs(path)
    chosen = sample_indices(list(range(len(ids))), max_pairs, seed)
    name = f"debian_retrieval_{lang}"
    write_table({"id": [ids[i] for i in chosen], "source": [en[i] for i in chosen], "target": [tgt[i] for i in chosen]},
                out_dir / f"{name}.parquet")
    return {"name": name, "kind": "retrieval", "language": f"en-{lang}", "file": f"{name}.parquet",
            "size": len(chosen), "rejected": dict(rejected)}


def _write_side(table: dict[str, list], split: str, side: str, id_prefix: str,
                items: list[tuple[str, int | None]], rng: np.random.Generator) -> dict[int, str]:
    """Append (text, pair index or None) items in shuffled order with BUCC-like ids; return pair index -> id."""
    pair_to_id: dict[int, str] = {}
    split_digit = 0 if split == "sample" else 1
    for number, position in enumerate(rng.permutation(len(items)).tolist(), start=1):
        text, pair = items[position]
        item_id = f"{id_prefix}-{split_digit}{number:05d}"
        for column, value in (("split", split), ("side", side), ("id", item_id), ("text", text)):
            table[column].append(value)
        if pair is not None:
            pair_to_id[pair] = item_id
    return pair_to_id


def build_debian_mining(path: Path, lang: str, out_dir: Path, gold_per_split: int, orphans_per_side: int,
                        distractors_per_side: int, seed: int) -> dict:
    """Write ``debian_mining_{lang}.parquet`` (split, side, id, text) and ``..._gold.parquet`` (split, src_id, tgt_id).
    Source side = ``lang`` (ids ``{lang}-…``), target side = English (``en-…``), as in BUCC."""
    ids, en, tgt, rejected = load_debian_pairs(path)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(ids)).tolist()
    per_split = gold_per_split + 2 * orphans_per_side
    if len(order) < 2 * per_split:
        raise ValueError(f"debian-reference {lang} has {len(order)} clean pairs; mining needs {2 * per_split}")
    en_wiki = [a.lead for a in load_wiki_articles("en")]
    tgt_wiki = [a.lead for a in load_wiki_articles(lang)] if lang in WIKI_LANGUAGES else []
    en_wiki = [en_wiki[i] for i in rng.permutation(len(en_wiki))]
    tgt_wiki = [tgt_wiki[i] for i in rng.permutation(len(tgt_wiki))]
    table: dict[str, list] = {"split": [], "side": [], "id": [], "text": []}
    gold: dict[str, list] = {"split": [], "src_id": [], "tgt_id": []}
    for split_no, split in enumerate(("sample", "test")):
        chunk = order[split_no * per_split:(split_no + 1) * per_split]
        gold_pairs = chunk[:gold_per_split]
        src_orphans = chunk[gold_per_split:gold_per_split + orphans_per_side]
        tgt_orphans = chunk[gold_per_split + orphans_per_side:]
        distractors = slice(split_no * distractors_per_side, (split_no + 1) * distractors_per_side)
        src_items = [(tgt[i], i) for i in gold_pairs + src_orphans] + [(t, None) for t in tgt_wiki[distractors]]
        tgt_items = [(en[i], i) for i in gold_pairs + tgt_orphans] + [(t, None) for t in en_wiki[distractors]]
        src_ids = _write_side(table, split, "src", lang, src_items, rng)
        tgt_ids = _write_side(table, split, "tgt", "en", tgt_items, rng)
        for pair in gold_pairs:
            gold["split"].append(split)
            gold["src_id"].append(src_ids[pair])
            gold["tgt_id"].append(tgt_ids[pair])
    name = f"debian_mining_{lang}"
    write_table(table, out_dir / f"{name}.parquet")
    write_table(gold, out_dir / f"{name}_gold.parquet")
    return {"name": name, "kind": "mining", "language": f"{lang}-en", "file": f"{name}.parquet", "gold_file": f"{name}_gold.parquet",
            "gold_per_split": gold_per_split, "orphans_per_side": orphans_per_side,
            "distractors_per_side": {"en": distractors_per_side, lang: distractors_per_side if tgt_wiki else 0},
            "rejected": dict(rejected)}
