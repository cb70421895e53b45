"""Map Wikipedia titles to entity ids, and entities to their Wikidata P31 ("instance of") types.

Sources, in order of preference:

1. A Wikidata JSON dump (``latest-all.json[.bz2|.gz]``): a JSON array written one entity per line (each line
   ends with ``,``). Streamed line by line; for each entity we keep ``sitelinks[<site id>].title`` for the
   languages asked for (:func:`wikidata_site_id`: ``zh-yue`` → ``zh_yuewiki``) and the ids in ``claims.P31[*].mainsnak.datavalue.value.id``.
2. ``page_props`` SQL dumps (``<lang>wiki-latest-page_props.sql.gz``): ``INSERT`` tuples
   ``(pp_page, 'pp_propname', 'pp_value', pp_sortkey)``; rows with ``pp_propname = 'wikibase_item'`` map a page id
   to a QID (page ids → titles come from the article dump). They carry no P31 types.
3. Neither: the title itself is the entity id (the monolingual EASE setting; English titles as ids, other
   languages prefixed ``<lang>wiki:``). :attr:`EntityCatalog.id_source` says which one was used, and the
   workflow writes it into the corpus manifest.

Rejected Wikidata lines (invalid UTF-8, invalid JSON, JSON that is no entity) are counted by reason and the first
:data:`MAX_REJECTS_LISTED` kept with their line number and start, for the workflow's counters and rejects.
:func:`require_sitelinks` refuses a file where no entity has a sitelink to a configured language's Wikipedia
(the wrong file, or a subset without that language), and :func:`check_wikidata_head` runs the load on the file's
first :data:`HEAD_BYTES` before Ray: the whole check on a small file, "is it Wikidata JSON at all" on a large one.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from interlingua.core.archives import DECOMPRESSION_ERRORS, cut_short, open_compressed
from interlingua.core.errors import UserError
from interlingua.core.redact import redact, redact_text

_SQL_TUPLE = re.compile(r"\((\d+),'((?:[^'\\]|\\.)*)','((?:[^'\\]|\\.)*)',(?:NULL|[-+0-9.eE]+)\)")
_SQL_ESCAPE = re.compile(r"\\(.)")
MAX_REJECTS_LISTED = 1_000
REJECT_TEXT_CHARS = 200
#: Decompressed bytes of a Wikidata JSON file :func:`check_wikidata_head` reads (its lines up to the one crossing it).
HEAD_BYTES = 8 << 20


@dataclass
class EntityCatalog:
    """Title → entity id per language, and entity id → P31 type ids."""

    id_source: str
    titles: dict[str, dict[str, str]] = field(default_factory=dict)
    types: dict[str, tuple[str, ...]] = field(default_factory=dict)
    lines_rejected: int = 0
    rejected_reasons: Counter = field(default_factory=Counter)
    rejects: list[dict] = field(default_factory=list)  # the first MAX_REJECTS_LISTED: line, reason, text
    lines_read: int = 0
    entities_read: int = 0  # lines that are entities, whatever their sitelinks
    complete: bool = True  # the whole file was read (not only its first max_bytes)
    partial_inputs: list[dict] = field(default_factory=list)  # inputs read in part (allow_truncated_inputs)

    def entity_id(self, lang: str, title: str) -> str | None:
        """The entity a (normalized, redirect-resolved) title of ``lang`` names, or ``None`` if unmapped."""
        if self.id_source == "titles":
            return title if lang == "en" else f"{lang}wiki:{title}"
        return self.titles.get(lang, {}).get(title)

    @property
    def has_types(self) -> bool:
        return bool(self.types)


# Wikipedias whose database name (Wikidata's site id) is not their language code's: Belarusian in the
# Taraškievica orthography moved from be-x-old.wikipedia.org to be-tarask.wikipedia.org and kept its database.
_RENAMED_SITES = {"be-tarask": "be_x_oldwiki"}


def wikidata_site_id(lang: str) -> str:
    """Wikidata's sitelink key for the Wikipedia of ``lang`` (its database name): ``en`` → ``enwiki``,
    ``zh-min-nan`` → ``zh_min_nanwiki`` (database names write the code's hyphens as underscores),
    ``be-tarask`` → ``be_x_oldwiki``."""
    return _RENAMED_SITES.get(lang) or f"{lang.replace('-', '_')}wiki"


def title_catalog() -> EntityCatalog:
    """The fallback catalog: titles are entity ids, no types."""
    return EntityCatalog(id_source="titles")


def load_wikidata_json(url: str, langs: Iterable[str], *, max_bytes: int | None = None,
                       partial: list[dict] | None = None) -> EntityCatalog:
    """Stream a Wikidata JSON dump; keep entities with a sitelink in one of ``langs`` (e.g. ``["en", "bg"]``).

    Lines that are not valid entity JSON (invalid UTF-8, invalid JSON, no string ``id``, ``sitelinks`` /
    ``claims`` of the wrong shape) are counted in ``lines_rejected`` by reason and listed (the array brackets are
    not); the load never stops on one. P31 values of claims ranked ``deprecated`` (known to be wrong) are not
    types. With ``max_bytes``, reading stops after the line that crosses it (``complete`` says whether it did).
    A compressed file cut short or corrupt raises :class:`TruncatedInputError` (file, compressed offset, complete
    lines before the damage); with ``partial`` (``allow_truncated_inputs``) the lines before it are kept and the
    damage is appended there instead (``input_url``, ``reason``, ``offset``: :meth:`VersionWriter.mark_partial`'s).
    """
    wanted = {wikidata_site_id(lang): lang for lang in langs}
    catalog = EntityCatalog(id_source="wikidata_json", titles={lang: {} for lang in wanted.values()})
    with open_compressed(url, "rb") as handle:
        try:
            for number, line in _lines(handle, max_bytes, catalog):
                _add_entity(catalog, wanted, number, line)
        except DECOMPRESSION_ERRORS as error:
            _damaged(url, handle, error, catalog.lines_read, partial)
    return catalog


def _lines(handle, max_bytes: int | None, catalog: EntityCatalog) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` of the entity lines (brackets, blank lines and the trailing commas left out); with
    ``max_bytes``, up to the line that crosses it, setting ``catalog.complete``; ``catalog.lines_read`` counts."""
    read, number = 0, 0
    while True:
        if max_bytes is not None and read >= max_bytes:
            catalog.complete = not handle.read(1)
            return
        raw = handle.readline(-1 if max_bytes is None else max_bytes - read)
        if not raw:
            return
        number, read = number + 1, read + len(raw)
        if max_bytes is not None and read >= max_bytes and not raw.endswith(b"\n") and handle.read(1):
            catalog.complete = False  # a line cut by the limit: not judged
            return
        catalog.lines_read = number
        line = raw.strip().rstrip(b",")
        if line and line not in (b"[", b"]"):
            yield number, line


def _add_entity(catalog: EntityCatalog, wanted: Mapping[str, str], number: int, line: bytes) -> None:
    """The entity of ``line`` into ``catalog``: its titles in the ``wanted`` sites (site id -> lang) and, if it has
    one, its P31 types; a line that is no entity is rejected."""
    entity, reason = _entity(line)
    if reason:
        _reject(catalog, number, reason, line)
        return
    catalog.entities_read += 1
    qid, linked = entity["id"], False
    for site, link in (entity.get("sitelinks") or {}).items():
        lang = wanted.get(site)
        if lang is None or not isinstance(link, Mapping):
            continue
        title = link.get("title")
        if isinstance(title, str) and title:
            catalog.titles[lang][title] = qid
            linked = True
    if linked:
        types = _p31_types(entity)
        if types:
            catalog.types[qid] = types


def _damaged(url: str, handle, error: BaseException, lines: int, partial: list[dict] | None) -> None:
    """Raise the :class:`TruncatedInputError` of ``url`` (``handle`` broke with ``error`` after ``lines``
    complete lines) or, with ``partial``, record it there."""
    damage = cut_short(url, handle, error, lines)
    if partial is None:
        raise damage from None
    partial.append({"input_url": redact(damage.url), "reason": damage.detail, "offset": damage.offset})


def _entity(line: bytes) -> tuple[Mapping | None, str | None]:
    """``(entity, None)`` for a line holding an entity (a string ``id``, ``sitelinks`` a mapping), else
    ``(None, reason)``."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return None, "invalid_utf8"
    try:
        entity = json.loads(text)
    except ValueError:
        return None, "invalid_json"
    try:
        qid = entity["id"]
        sitelinks = entity.get("sitelinks") or {}
        if not isinstance(qid, str) or not qid or not isinstance(sitelinks, Mapping):
            raise TypeError("not an entity")
    except (KeyError, TypeError, AttributeError):
        return None, "not_an_entity"
    return entity, None


def _reject(catalog: EntityCatalog, number: int, reason: str, line: bytes) -> None:
    catalog.lines_rejected += 1
    catalog.rejected_reasons[reason] += 1
    if len(catalog.rejects) < MAX_REJECTS_LISTED:
        text = line[: REJECT_TEXT_CHARS * 4].decode("utf-8", errors="replace")[:REJECT_TEXT_CHARS]
        catalog.rejects.append({"line": number, "reason": reason, "text": text})


def require_sitelinks(catalog: EntityCatalog, url: str, langs: Iterable[str]) -> None:
    """:class:`UserError` when ``catalog`` (a :func:`load_wikidata_json` of ``url``) holds no entity, or no
    entity with a sitelink to one of ``langs``' Wikipedias: the wrong file, or one without that language."""
    shown = redact_text(str(url))
    if not catalog.entities_read:
        raise UserError(f"wikidata_json {shown} holds no Wikidata entity{_first_reject(catalog)} (hint: give "
                        f"Wikidata's JSON dump, latest-all.json.bz2 or .gz)")
    missing = [wikidata_site_id(lang) for lang in langs if not catalog.titles.get(lang)]
    if missing:
        raise UserError(f"wikidata_json {shown}: none of its {catalog.entities_read} entities has a sitelink to "
                        f"{', '.join(missing)} (hint: a Wikidata JSON dump that covers these Wikipedias, or leave "
                        f"wikidata_json out)")


def check_wikidata_head(url: str, langs: Iterable[str], allow_truncated: bool = False) -> EntityCatalog:
    """Before Ray: :func:`require_sitelinks` on the first :data:`HEAD_BYTES` of ``url`` when that is the whole
    file (or all that a damaged file holds), else :class:`UserError` only when none of those lines is an entity.
    Damage inside the head raises :class:`TruncatedInputError` unless ``allow_truncated``."""
    langs = list(langs)
    head = load_wikidata_json(url, langs, max_bytes=HEAD_BYTES, partial=[] if allow_truncated else None)
    if head.complete:
        require_sitelinks(head, url, langs)
    elif not head.entities_read:
        raise UserError(f"wikidata_json {redact_text(str(url))} is not Wikidata JSON: none of its first "
                        f"{head.lines_read} lines is an entity{_first_reject(head)} (hint: give Wikidata's JSON dump, "
                        f"latest-all.json.bz2 or .gz)")
    return head


def _first_reject(catalog: EntityCatalog) -> str:
    if not catalog.rejects:
        return ""
    first = catalog.rejects[0]
    return (f": {catalog.lines_rejected} lines rejected, the first line {first['line']} ({first['reason']}: "
            f"{first['text'][:60]!r})")


def _p31_types(entity: Mapping) -> tuple[str, ...]:
    claims = entity.get("claims") or {}
    statements = claims.get("P31") if isinstance(claims, Mapping) else None
    types: list[str] = []
    for claim in statements if isinstance(statements, list) else ():
        try:
            if claim.get("rank") == "deprecated":
                continue
            value = claim["mainsnak"]["datavalue"]["value"]["id"]
        except (KeyError, TypeError, AttributeError):
            continue
        if isinstance(value, str) and value and value not in types:
            types.append(value)
    return tuple(types)


def read_page_props_qids(url: str, partial: list[dict] | None = None) -> dict[int, str]:
    """``page id → QID`` from a ``page_props`` SQL dump (``wikibase_item`` rows only). A compressed file cut short
    or corrupt: as :func:`load_wikidata_json` (raised, or with ``partial`` recorded there and the rows before kept)."""
    qids: dict[int, str] = {}
    lines = 0
    with open_compressed(url, "rt", encoding="utf-8", errors="replace") as handle:
        try:
            for line in handle:
                lines += 1
                if not line.startswith("INSERT INTO"):
                    continue
                for match in _SQL_TUPLE.finditer(line):
                    if _SQL_ESCAPE.sub(r"\1", match.group(2)) == "wikibase_item":
                        qids[int(match.group(1))] = _SQL_ESCAPE.sub(r"\1", match.group(3))
        except DECOMPRESSION_ERRORS as error:
            _damaged(url, handle.buffer, error, lines, partial)
    return qids


def add_page_props(catalog: EntityCatalog, lang: str, page_titles: Mapping[int, str], qids: Mapping[int, str]) -> None:
    """Add ``lang`` titles to ``catalog`` through page ids (titles from the dump, QIDs from ``page_props``)."""
    mapping = catalog.titles.setdefault(lang, {})
    for page_id, title in page_titles.items():
        qid = qids.get(page_id)
        if qid is not None:
            mapping.setdefault(title, qid)
