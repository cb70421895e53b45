"""Remove the parts of wikitext that are not running prose, keeping ``[[article links]]`` in place.

What is removed (every pass is linear in the page length, also on adversarial input such as thousands of
unclosed ``<!--`` or ``<ref>``; the Python loops run over markup tokens, not characters, and no pass recurses):

1. HTML comments ``<!-- … -->`` (an unclosed comment hides the rest of the page, as in MediaWiki).
2. Elements whose content is not prose: ``<ref>``, ``<math>``, ``<gallery>``, ``<timeline>``, ``<pre>``, … An
   unclosed one loses only its opening tag (counted ``unclosed_tag``). ``<nowiki>…</nowiki>`` keeps its content
   as literal text (its markup characters are protected until rendering, see :func:`restore_literals`);
   ``<nowiki/>`` becomes :data:`TRAIL_BREAK`, which stops a link trail (``[[Bus]]<nowiki/>es``: only "Bus" is
   linked) and renders as nothing.
3. Templates, parser functions and template arguments (``{{…}}``, ``{{{…}}}``), nested, matched by brace runs
   the way MediaWiki's preprocessor does (a run of closing braces closes ``{{{`` first when it can, else
   ``{{``). Nesting deeper than ``max_template_depth`` cuts the page at the outermost open template and counts
   ``template_depth_exceeded`` (the matching is a loop over a stack, so 5000-deep nesting costs no recursion).
4. Tables (``{|`` … ``|}`` at line starts), nested.
5. Links into the File/Image and Category namespaces (canonical names, the localized names of the wiki's
   ``<siteinfo>``, and a built-in list of localized names of large Wikipedias for pages read without one; a
   ``Prefix:Name.jpg`` target with a media file extension counts as a file too) and interlanguage links
   (``[[fr:Paris]]``; prefixes are Wikipedia language codes), whole, including nested links inside image
   captions. ``[[Media:…|label]]`` is a link to a file: its label stays, it names no entity. ``[[:fr:Paris|x]]``
   and ``[[:Category:X|x]]`` are inline links: their labels stay. A prefix naming the wiki's own language
   (:attr:`NamespacePrefixes.own_language`: ``[[en:Rome|Rome]]`` on the English Wikipedia) is, as in MediaWiki,
   redundant: the link is the local link ``[[Rome|Rome]]``. Interwiki prefixes to other projects (``w:``,
   ``wikt:``, ``commons:``, …) are external links: label kept, no entity.
6. Any remaining HTML tag (its content is kept), and behaviour switches (``__NOTOC__``).

Unclosed or stray markup tokens (``{{``, ``}}``, ``[[``, ``]]``, ``{|``) are removed as tokens and counted,
so the text around them survives; an unclosed ``[[`` does not hide the links after it. ``[[…]]`` whose target
(the part before the first ``|``) holds a line break or another ``[[``, or is empty or longer than
:data:`MAX_TARGET_CHARS`, is not a link in MediaWiki: its brackets
are removed as tokens (``invalid_link``). Every event is counted in the returned :class:`collections.Counter`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace

_NON_PROSE_TAGS = (
    "references|ref|math|chem|ce|gallery|timeline|score|syntaxhighlight|source|pre|graph|mapframe|maplink"
    "|templatedata|templatestyles|imagemap|hiero|inputbox|categorytree|code|nowiki"
)
_ELEMENT_OPEN = re.compile(rf"<({_NON_PROSE_TAGS})(?=[\s/>])[^<>]*>", re.IGNORECASE)
_ANY_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*\b[^<>]*>")
_BREAK_TAG = re.compile(r"<br\s*/?>", re.IGNORECASE)
_BEHAVIOUR_SWITCH = re.compile(r"__[A-Z]+__")
_BRACE_RUN = re.compile(r"\{\{+|\}\}+")
_TABLE_TOKEN = re.compile(r"^[ \t]*(\{\||\|\})", re.MULTILINE)
_BRACKET_TOKEN = re.compile(r"\[\[|\]\]")
_SPACES = re.compile(r"[\s_]+")
_MEDIA_FILE = re.compile(
    r"\.(?:jpe?g|png|gif|svg|tiff?|webp|xcf|bmp|ogg|oga|ogv|opus|webm|mp3|mp4|wav|flac|midi?|pdf|djvu|stl)\s*$",
    re.IGNORECASE,
)

MAX_TARGET_CHARS = 1024  # MediaWiki titles are at most 255 bytes; longer "targets" (with a #fragment) are not links
TRAIL_BREAK = "\ue000"
"""Stands for ``<nowiki/>`` between markup stripping and rendering: ends a link trail, renders as nothing."""
_LITERAL_CHARS = "[]{}|'<>_*#:;=!"
_PROTECT = str.maketrans({c: chr(0xE001 + i) for i, c in enumerate(_LITERAL_CHARS)})
_RESTORE = str.maketrans({chr(0xE001 + i): c for i, c in enumerate(_LITERAL_CHARS)} | {TRAIL_BREAK: None})


def restore_literals(text: str) -> str:
    """``<nowiki>`` content back to its characters, :data:`TRAIL_BREAK` removed (call on rendered text)."""
    return text.translate(_RESTORE)


CANONICAL_FILE_NAMESPACES = frozenset({"file", "image"})
CANONICAL_CATEGORY_NAMESPACES = frozenset({"category"})
# Localized names (and common aliases) of the File and Category namespaces of large Wikipedias, so that a page
# read without its wiki's <siteinfo> still loses its images and categories. Lower case.
LOCALIZED_FILE_NAMESPACES = frozenset(
    "datei bild fichier archivo imagen immagine файл изображение картинка bestand afbeelding plik grafika "
    "ficheiro arquivo imagem imaxe dosya resim tiedosto kuva fil soubor obrázek súbor obrázok fájl kép fișier "
    "imagine datoteka slika датотека слика податотека αρχείο εικόνα קובץ תמונה ملف صورة پرونده تصویر فائل 파일 그림 "
    "ファイル 画像 文件 檔案 档案 图像 圖像 चित्र फ़ाइल ไฟล์ ภาพ tập_tin hình berkas gambar fail failas vaizdas fails "
    "attēls pilt fitxer imatge fitxategi irudia зображення выява skrá mynd ffeil delwedd comhad íomhá dosiero "
    "bildo faili picha talaksan larawan fayl şəkil surat сурет ֆայլ պատկեր ფაილი სურათი ছবি চিত্র படிமம் கோப்பு "
    "దస్త్రం ചിത്രം പ്രമാണം".replace("_", " ").split()
)
LOCALIZED_CATEGORY_NAMESPACES = frozenset(
    "kategorie catégorie categoría categoria категория категорія категорија kategorija categorie kategoria "
    "kategori luokka kategória κατηγορία קטגוריה تصنيف رده زمرہ 분류 カテゴリ 分类 分類 श्रेणी หมวดหมู่ thể_loại "
    "kategooria kategorio катэгорыя flokkur categori catagóir jamii kategorya kateqoriya turkum санат "
    "կատեգորիա კატეგორია বিষয়শ্রেণী பகுப்பு వర్గం വർഗ്ഗം".replace("_", " ").split()
)
# Wikipedia language codes (interlanguage link prefixes), including historical aliases still accepted in links.
WIKIPEDIA_LANGUAGE_CODES = frozenset(
    """aa ab ace ady af ak als alt am ami an ang anp ar arc ary arz as ast atj av avk awa ay az azb ba ban bar
    bat-smg bbc bcl be be-tarask be-x-old bew bg bh bi bjn blk bm bn bo bpy br bs btm bug bxr ca cbk-zam cdo ce
    ceb ch cho chr chy ckb co cr crh cs csb cu cv cy da dag de dga din diq dk dsb dtp dty dv dz ee el eml en eo
    es et eu ext fa fat ff fi fiu-vro fj fo fon fr frp frr fur fy ga gag gan gcr gd gl glk gn gom gor got gpe
    gsw gu guc gur guw gv ha hak haw he hi hif ho hr hsb ht hu hy hyw hz ia iba id ie ig igl ii ik ilo inh io
    is it iu ja jam jbo jv ka kaa kab kbd kbp kcg kg kge ki kj kk kl km kn knc ko koi kr krc ks ksh ku kus kv
    kw ky la lad lb lbe lez lfn lg li lij lld lmo ln lo lrc lt ltg lv lzh mad mai map-bms mdf mg mh mhr mi min
    mk ml mn mni mnw mo mos mr mrj ms mt mus mwl my myv mzn na nah nan nap nb nds nds-nl ne new ng nia nl nn no
    nov nqo nr nrm nso nup nv ny oc olo om or os pa pag pam pap pcd pcm pdc pfl pi pih pl pms pnb pnt ps pt
    pwn qu rm rmy rn ro roa-rup roa-tara rsk ru rue rup rw sa sah sat sc scn sco sd se sg sgs sh shi shn shy si
    simple sk skr sl sm smn sn so sq sr srn ss st stq su sv sw syl szl szy ta tay tcy tdd te tet tg th ti tig
    tk tl tly tn to tpi tr trv ts tt tum tw ty tyv udm ug uk ur uz ve vec vep vi vls vo vro wa war wo wuu xal
    xh xmf yi yo yue za zea zgh zh zh-classical zh-min-nan zh-yue zu""".split()
)
# Namespaces and interwiki prefixes whose links show their label but name no article of this wiki.
_NON_ARTICLE_PREFIXES = frozenset(
    """talk user user_talk wikipedia wp project help template portal special draft module mediawiki book
    timedtext gadget topic wikt wiktionary s wikisource q wikiquote commons meta m d wikidata n wikinews b
    wikibooks v wikiversity voy wikivoyage species wikispecies mw mediawikiwiki c f foundation wmf wikimedia
    outreach incubator w phab phabricator gerrit bugzilla wikitech translatewiki oldwikisource metawikimedia doi
    arxiv rfc pmid imdbname imdbtitle imdbcompany google googlegroups oeis media medium média medios медия
    медиа""".replace("_", " ").split()
)


@dataclass(frozen=True)
class NamespacePrefixes:
    """Lower-cased namespace names of one wiki, grouped by what a link into them means for extraction.

    ``drop``: links removed whole (files, images, categories). ``non_article``: every other namespace or
    interwiki prefix (the link's label stays as text, but it names no entity; this includes ``Media:``).
    ``languages``: interlanguage prefixes (a link removed whole, unless written ``[[:fr:…]]``).
    ``own_language``: the wiki's own language code; a prefix equal to it points back at this wiki and is
    dropped from the target (:meth:`local_target`) before the target is classified.
    """

    drop: frozenset[str] = (
        CANONICAL_FILE_NAMESPACES
        | CANONICAL_CATEGORY_NAMESPACES
        | LOCALIZED_FILE_NAMESPACES
        | LOCALIZED_CATEGORY_NAMESPACES
    )
    non_article: frozenset[str] = field(default_factory=lambda: _NON_ARTICLE_PREFIXES)
    languages: frozenset[str] = WIKIPEDIA_LANGUAGE_CODES
    own_language: str | None = None

    @classmethod
    def from_siteinfo(cls, namespaces: dict[int, str], own_language: str | None = None) -> NamespacePrefixes:
        """Prefixes of a wiki from its ``<siteinfo>`` namespaces (key 6 File, 14 Category drop; −2 Media and
        all others are non-article), on top of the built-in names; ``own_language``: the wiki's language code."""
        base = cls()
        drop = set(base.drop)
        other = set(base.non_article)
        for key, name in namespaces.items():
            name = _SPACES.sub(" ", name or "").strip().lower()
            if not name or key == 0:
                continue
            (drop if key in (6, 14) else other).add(name)
        return cls(drop=frozenset(drop), non_article=frozenset(other - drop), languages=base.languages,
                   own_language=own_language)

    def for_language(self, lang: str) -> NamespacePrefixes:
        """These prefixes on the wiki of language ``lang`` (``self`` when that is already its own language)."""
        return self if self.own_language == lang else replace(self, own_language=lang)

    def local_target(self, target: str) -> str:
        """``target`` without the prefixes that name this wiki's own language (``en:Rome`` → ``Rome`` on the
        English Wikipedia, ``:en:Category:X`` → ``:Category:X``); any other target is returned as it is."""
        if self.own_language is None or ":" not in target:
            return target
        stripped = target.strip()
        rest = stripped.lstrip(":")
        colons = stripped[: len(stripped) - len(rest)]
        while True:
            head, sep, tail = rest.partition(":")
            if not sep or _SPACES.sub(" ", head).strip().lower() != self.own_language or not tail.strip():
                break
            rest = tail.lstrip()
        return target if len(rest) == len(stripped) - len(colons) else colons + rest

    def classify(self, target: str) -> str:
        """``"drop"``, ``"non_article"``, ``"interlanguage"`` or ``"article"`` for a raw link target."""
        if ":" not in target:
            return "article"
        target = self.local_target(target)
        stripped = target.strip()
        leading_colon = stripped.startswith(":")
        head, sep, rest = stripped.lstrip(":").partition(":")
        if not sep:
            return "article"
        prefix = _SPACES.sub(" ", head).strip().lower()
        if prefix in self.drop:
            return "non_article" if leading_colon else "drop"
        if prefix in self.non_article:
            return "non_article"
        if prefix in self.languages:
            return "non_article" if leading_colon else "interlanguage"
        if prefix and _MEDIA_FILE.search(rest):  # an unknown (localized) file namespace
            return "non_article" if leading_colon else "drop"
        return "article"


def strip_markup(text: str, prefixes: NamespacePrefixes, max_template_depth: int, issues: Counter) -> str:
    """Wikitext with non-prose removed (see module doc); ``[[links]]``, bold/italic and entities remain."""
    text = _strip_comments(text, issues)
    text = _strip_elements(text, issues)
    text = _delete_spans(text, _template_spans(text, max_template_depth, issues))
    text = _delete_spans(text, _table_spans(text, issues))
    text = _delete_spans(text, _dropped_link_spans(text, prefixes, issues))
    if "<" in text:
        text = _BREAK_TAG.sub(" ", text)
        text = _ANY_TAG.sub("", text)
    if "__" in text:
        text = _BEHAVIOUR_SWITCH.sub("", text)
    return text


def _strip_comments(text: str, issues: Counter) -> str:
    outside, _, unclosed = split_comments(text)
    if unclosed:
        issues["unclosed_comment"] += 1
    return outside


def split_comments(text: str) -> tuple[str, list[str], bool]:
    """``(the text without its HTML comments, the comments' bodies, whether the last one is unclosed)``; an unclosed
    ``<!--`` hides the rest of the page, as in MediaWiki."""
    if "<!--" not in text:
        return text, [], False
    pieces: list[str] = []
    bodies: list[str] = []
    cursor = 0
    while True:
        start = text.find("<!--", cursor)
        if start < 0:
            pieces.append(text[cursor:])
            return "".join(pieces), bodies, False
        pieces.append(text[cursor:start])
        end = text.find("-->", start + 4)
        if end < 0:
            bodies.append(text[start + 4 :])
            return "".join(pieces), bodies, True
        bodies.append(text[start + 4 : end])
        cursor = end + 3


def _strip_elements(text: str, issues: Counter) -> str:
    """Non-prose elements removed, ``<nowiki>`` content protected; one left-to-right pass (see module doc)."""
    if "<" not in text:
        return text
    pieces: list[str] = []
    cursor = 0
    closes: dict[str, re.Pattern] = {}
    found: dict[str, tuple[int, re.Match | None]] = {}  # name → (searched from, first close at or after it)

    def closing_tag(name: str, start: int) -> re.Match | None:
        cached = found.get(name)
        if cached is not None and cached[0] <= start and (cached[1] is None or cached[1].start() >= start):
            return cached[1]
        pattern = closes.get(name)
        if pattern is None:
            pattern = closes[name] = re.compile(rf"</{name}\s*>", re.IGNORECASE)
        match = pattern.search(text, start)
        found[name] = (start, match)
        return match

    while True:
        opening = _ELEMENT_OPEN.search(text, cursor)
        if opening is None:
            break
        name = opening.group(1).lower()
        pieces.append(text[cursor : opening.start()])
        cursor = opening.end()
        if opening.group().endswith("/>"):
            if name == "nowiki":
                pieces.append(TRAIL_BREAK)
            continue
        closing = closing_tag(name, cursor)
        if closing is None:
            issues["unclosed_tag"] += 1
            continue
        if name == "nowiki":
            content = text[cursor : closing.start()]
            pieces.append(content.translate(_PROTECT) if content else TRAIL_BREAK)
        cursor = closing.end()
    pieces.append(text[cursor:])
    return "".join(pieces)


def _template_spans(text: str, max_depth: int, issues: Counter) -> list[tuple[int, int]]:
    """Spans of templates / template arguments, matched by brace runs; unmatched runs become token spans."""
    if "{{" not in text and "}}" not in text:
        return []
    spans: list[tuple[int, int]] = []
    stack: list[list[int]] = []  # [run_start, braces_left]
    for match in _BRACE_RUN.finditer(text):
        run_start, run_length = match.start(), match.end() - match.start()
        if text[run_start] == "{":
            stack.append([run_start, run_length])
            if len(stack) > max_depth or run_length > 3 * max_depth:
                issues["template_depth_exceeded"] += 1
                return spans + [(stack[0][0], len(text))]
            continue
        close_at, left = run_start, run_length
        while left >= 2 and stack:
            top = stack[-1]
            take = 3 if top[1] >= 3 and left >= 3 else 2
            top[1] -= take
            close_at += take
            left -= take
            spans.append((top[0] + top[1], close_at))
            if top[1] < 2:
                stack.pop()
        if left >= 2:
            issues["unbalanced_template_close"] += 1
            spans.append((close_at, close_at + left))
    for run_start, braces_left in stack:
        issues["unclosed_template"] += 1
        spans.append((run_start, run_start + braces_left))
    return spans


def _table_spans(text: str, issues: Counter) -> list[tuple[int, int]]:
    if "{|" not in text:
        return []
    spans: list[tuple[int, int]] = []
    stack: list[int] = []
    for match in _TABLE_TOKEN.finditer(text):
        if match.group(1) == "{|":
            stack.append(match.start(1))
        elif stack:
            spans.append((stack.pop(), match.end(1)))
        else:
            issues["unbalanced_table_close"] += 1
            spans.append((match.start(1), match.end(1)))
    for start in stack:
        issues["unclosed_table"] += 1
        spans.append((start, start + 2))
    return spans


def _dropped_link_spans(text: str, prefixes: NamespacePrefixes, issues: Counter) -> list[tuple[int, int]]:
    """Whole File/Category/interlanguage links, plus unmatched ``[[`` / ``]]`` tokens and invalid links' brackets.

    Brackets are paired with a stack; the outermost *valid* pairs are classified (a pair whose target is not a
    valid link target only loses its brackets, and the pairs inside it are looked at instead).
    """
    if "[[" not in text and "]]" not in text:
        return []
    spans: list[tuple[int, int]] = []
    pairs: list[tuple[int, int]] = []
    stack: list[int] = []
    for match in _BRACKET_TOKEN.finditer(text):
        if match.group() == "[[":
            stack.append(match.start())
        elif stack:
            pairs.append((stack.pop(), match.end()))
        else:
            issues["unbalanced_link_close"] += 1
            spans.append((match.start(), match.end()))
    for start in stack:
        issues["unclosed_link"] += 1
        spans.append((start, start + 2))
    pairs.sort()
    covered_until = -1
    for start, end in pairs:
        if start < covered_until:
            continue  # inside a valid link that stays or goes whole
        inner_end = min(end - 2, start + 2 + MAX_TARGET_CHARS + 1)
        bar = text.find("|", start + 2, inner_end)
        target = text[start + 2 : inner_end if bar < 0 else bar]
        if len(target) > MAX_TARGET_CHARS or "[[" in target or "\n" in target or not target.strip():
            issues["invalid_link"] += 1
            spans.extend(((start, start + 2), (end - 2, end)))
            continue
        covered_until = end
        kind = prefixes.classify(target)
        if kind in ("drop", "interlanguage"):
            issues[f"removed_{kind}_link"] += 1
            spans.append((start, end))
        elif text.find("[[", start + 2, end - 2) >= 0:
            issues["nested_link"] += 1
            spans.append((start, end))
    return spans


def _delete_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without the union of ``spans`` (which may nest or overlap)."""
    if not spans:
        return text
    spans.sort()
    pieces: list[str] = []
    cursor = 0
    for start, end in spans:
        if end <= cursor:
            continue
        if start > cursor:
            pieces.append(text[cursor:start])
        cursor = max(cursor, end)
    pieces.append(text[cursor:])
    return "".join(pieces)
