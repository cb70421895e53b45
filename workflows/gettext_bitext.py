"""Workflow ``gettext-bitext``: the human translations in the system's message catalogs -> a versioned bitext corpus.

Each program's English messages and their translations ship in ``<locale_dir>/<lang>/LC_MESSAGES/<domain>.mo``
(Debian: ``/usr/share/locale``; apt, coreutils, PostgreSQL, iso-codes, ...). For every language asked for, every
catalog is parsed (:mod:`~interlingua.operators.bitext.message_catalogs`), entries are turned into
(English, translation) pairs, and the pairs go through the bitext hygiene filters; one shard per language
(``en-<lang>``). Entries left out (untranslated, identical, too short or long, mostly placeholders), unreadable
catalogs and the hygiene filters' removals are kept in the version's rejects with their reason.

The version is fixed by the config and the sha256 of every catalog read, so a system update that changes a
catalog gives a new version, never a changed one. Messages are short technical sentences, the domain of software
documentation (``debian-reference``): ``train`` drops any pair whose text occurs in the benchmark pack.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from interlingua.core.config import Config, require_order
from interlingua.core.names import SafeName

DESCRIPTION = "English messages and their translations from gettext catalogs (.mo) -> bitext corpus, a shard per language"

DEFAULT_LOCALE_DIR = "/usr/share/locale"


class GettextBitextConfig(Config):
    locale_dir: str = Field(DEFAULT_LOCALE_DIR, description="folder of <lang>/LC_MESSAGES/<domain>.mo catalogs (a path "
                                                            "or fsspec URL)")
    languages: list[str] = Field(default_factory=lambda: ["de", "fr", "es"],
                                 description="catalog languages (folder names under locale_dir, e.g. de, pt_BR)")
    domains: list[str] = Field(default_factory=list, description="only these catalogs (e.g. [apt, coreutils]); "
                                                                "empty: every catalog")
    min_chars: int = Field(30, ge=1, description="English messages shorter than this are left out")
    max_chars: int = Field(300, ge=1, description="English messages longer than this are left out")
    min_letter_share: float = Field(0.6, ge=0.0, le=1.0,
                                    description="least share of letters in the English once placeholders are removed")
    pairs_per_language: int | None = Field(None, ge=1, description="keep a seeded sample of this many pairs per language")
    max_length_ratio: float = Field(3.0, ge=1.0, description="hygiene: max token-length ratio of a pair")
    seed: int = 0
    name: SafeName = Field("gettext-bitext", description="corpus name in the store")
    state_dir: str | None = Field(None, description="default: $INTERLINGUA_HOME or ./.interlingua")

    @model_validator(mode="after")
    def _char_bounds(self) -> "GettextBitextConfig":
        require_order(self, "min_chars", "max_chars")  # at load, not when the run starts
        return self

    @field_validator("languages")
    @classmethod
    def _languages(cls, languages: list[str]) -> list[str]:
        bad = [lang for lang in languages if not lang or "/" in lang or lang.startswith(".") or lang.startswith("en")]
        if bad or not languages:
            raise ValueError(f"languages must be locale folder names other than English (e.g. de, fr, pt_BR); got {bad or languages}")
        return list(dict.fromkeys(languages))


CONFIG = GettextBitextConfig


def run(config: GettextBitextConfig, *, address: str | None = None) -> dict[str, Any]:
    """``address`` is accepted like every workflow's; parsing catalogs needs no Ray."""
    from interlingua.core.errors import UserError
    from interlingua.core.progress import Stages
    from interlingua.core.runtime import corpus_root, state_dir
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.workflows.bitext_source import publish_shards, published_summary

    stages = Stages("gettext-bitext")
    with stages("catalogs"):
        catalogs = find_catalogs(config.locale_dir, config.languages, config.domains)
        empty = [lang for lang in config.languages if not catalogs[lang]]
        if empty:
            raise UserError(f"no .mo catalogs for {empty} under {config.locale_dir}/<lang>/LC_MESSAGES"
                            f"{' for domains ' + str(config.domains) if config.domains else ''} (install the programs' "
                            "translations, e.g. Debian's locales are not excluded by dpkg path-exclude, or set locale_dir=...)")
        digest = catalogs_digest(catalogs)
        print(f"  {', '.join(f'{lang} {len(paths)}' for lang, paths in catalogs.items())} catalogs under {config.locale_dir}")
    store = CorpusStore(corpus_root(state_dir(config.state_dir)))
    manifest_config = config.model_dump(mode="json", exclude={"state_dir"}) | {
        "catalogs": sum(len(p) for p in catalogs.values()), "catalogs_sha256": digest}
    writer = store.open_version(config.name, manifest_config, [config.locale_dir])

    def write(shard_id: str) -> None:
        with stages(shard_id):
            lang = shard_id.removeprefix("en-")
            print(f"  {shard_id}: {_write_language(writer, shard_id, lang, catalogs[lang], config)} pairs")

    manifest = publish_shards(writer, [f"en-{lang}" for lang in catalogs], write)
    return published_summary("gettext-bitext", manifest, ["en", *config.languages], seconds=stages.seconds)


def find_catalogs(locale_dir: str, languages: list[str], domains: list[str]) -> dict[str, list[str]]:
    """Per language, its ``.mo`` files (sorted paths), only ``domains`` when given."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(locale_dir)
    out = {}
    for lang in languages:
        paths = sorted(fs.glob(f"{root.rstrip('/')}/{lang}/LC_MESSAGES/*.mo"))
        if domains:
            paths = [p for p in paths if p.rsplit("/", 1)[-1][:-3] in domains]
        out[lang] = [fs.unstrip_protocol(p) if "://" in locale_dir else p for p in paths]  # reopened with fsspec.open
    return out


def catalogs_digest(catalogs: dict[str, list[str]]) -> str:
    """One sha256 over every catalog's language, file name and content digest: the version changes when any does."""
    import hashlib

    import fsspec

    lines = []
    for lang, paths in sorted(catalogs.items()):
        for path in paths:
            with fsspec.open(path, "rb") as fh:
                lines.append(f"{lang}/{path.rsplit('/', 1)[-1]} {hashlib.sha256(fh.read()).hexdigest()}")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _write_language(writer, shard_id: str, lang: str, paths: list[str], config: GettextBitextConfig) -> int:
    import hashlib
    from collections import Counter

    import fsspec

    from interlingua.core.progress import progress_bar
    from interlingua.evaluation.pack.pairs import sample_indices
    from interlingua.operators.bitext.hygiene import HygieneSettings
    from interlingua.operators.bitext.message_catalogs import (CatalogFormatError, CatalogPairSettings, catalog_pairs,
                                                               read_mo)
    from interlingua.workflows.bitext_source import write_bitext_shard

    settings = CatalogPairSettings(config.min_chars, config.max_chars, config.min_letter_share)
    part: dict[str, list] = {"id": [], "src": [], "tgt": []}
    rejects: list[dict] = []
    counters = {"catalogs": len(paths), "catalogs.unreadable": 0, "entries": 0}
    seen: set[str] = set()
    bar = progress_bar(total=len(paths), desc=f"en-{lang} catalogs", unit="catalog")
    for path in paths:
        bar.update(1)
        domain = path.rsplit("/", 1)[-1][:-3]
        try:
            with fsspec.open(path, "rb") as fh:
                entries = read_mo(fh.read())
        except (CatalogFormatError, OSError) as err:
            counters["catalogs.unreadable"] += 1
            rejects.append({"operator": "gettext", "reason": "unreadable_catalog", "row": {"id": domain, "error": str(err)}})
            continue
        counters["entries"] += len(entries)
        kept, rejected = catalog_pairs(entries, settings)
        for english, translation, reason in rejected:
            if reason != "header":
                rejects.append({"operator": "gettext", "reason": reason,
                                "row": {"id": domain, "src": english, "tgt": translation}})
        for english, translation in kept:
            if english in seen:  # the same message in another program: its first translation (sorted domains) is kept
                rejects.append({"operator": "gettext", "reason": "duplicate_message",
                                "row": {"id": domain, "src": english, "tgt": translation}})
                continue
            seen.add(english)
            digest = hashlib.sha256(english.encode()).hexdigest()[:12]
            part["id"].append(f"{lang}:{domain}:{digest}")
            part["src"].append(english)
            part["tgt"].append(translation)
    bar.close()
    if config.pairs_per_language is not None and len(part["id"]) > config.pairs_per_language:
        chosen = sample_indices(list(range(len(part["id"]))), config.pairs_per_language, config.seed)
        counters["sampled_out"] = len(part["id"]) - len(chosen)
        part = {k: [v[i] for i in chosen] for k, v in part.items()}
    counters.update({f"gettext.{reason}": n for reason, n in sorted(Counter(r["reason"] for r in rejects).items())})
    return write_bitext_shard(writer, shard_id, part, src_lang="en", tgt_lang=lang,
                              hygiene=HygieneSettings(max_length_ratio=config.max_length_ratio),
                              extra_rejects=rejects, counters=counters)
