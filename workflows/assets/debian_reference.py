"""Held-out paragraph pairs en–{de,fr,es} from the Debian Reference guide (Debian ``debian-reference-*``).

The translations of the Debian Reference (Osamu Aoki) are generated with po4a from the English DocBook
source, then rendered by DocBook XSL into one XHTML file per chapter and language under
``/usr/share/debian-reference/<doc>.<lang>.html`` (``pr01``, ``ch01``…``ch12``, ``apa``, ``index``).
po4a translates text, never structure, so both sides share the element tree and the section anchors
(``<a id="_an_overview_of_the_boot_strap_process"/>`` in every language).

Pairing (:func:`pair_blocks`):
1. :func:`extract_blocks` walks one XHTML file in document order and returns its text blocks — the outermost
   ``p``, ``pre``, ``td``/``th``, ``h1``–``h6`` and ``dt`` elements outside the navigation header/footer and
   the table of contents — each with its kind (paragraph, code, table, heading, caption, term), the id of the
   section it belongs to (the last heading anchor seen), its whitespace-normalised text and its *invariants*
   (the numbers and ``<code>`` literals it contains, which translators leave unchanged).
2. Blocks are grouped by section id; a section is paired position by position only when both sides have the
   same sequence of block kinds, otherwise all its blocks are skipped as ``section_structure_mismatch``.
3. Within an aligned section, a position is kept only when it is a paragraph on both sides, both texts have at
   least ``min_chars`` characters, the target differs from the English (po4a leaves untranslated strings in
   English), and, when both sides contain invariants, their Jaccard similarity is at least
   ``min_invariant_jaccard``. Every skipped position is counted by reason and kept aside with it.

Alignment check (:func:`invariant_agreement`): translators do translate placeholders inside ``<code>``
("distribution_area" → "distribution_bereich"), so invariants are a noisy signal and the default threshold
only removes pairs that share none. Measured on version 2.100: kept pairs have a mean invariant Jaccard of
≈0.9 against ≈0.1 for the same pairs with the target shifted by one (a misaligned control); both numbers are
written to the counts file.

Output of :func:`build_debian_reference_pairs` in ``out_dir`` per target language ``L``:
``debian-reference-en-L.parquet`` (columns ``id``, ``section``, ``en``, ``tgt``), ``…rejects.parquet``
(plus ``reason``) and ``…counts.json``.
"""

from __future__ import annotations

import json
import logging
import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from tqdm import tqdm

from interlingua.workflows.assets.rows_file import write_rows
from interlingua.workflows.assets.debian_packages import require_debian_packages

logger = logging.getLogger(__name__)

DOC_DIR = Path("/usr/share/debian-reference")
SUPPORTED_LANGUAGES: tuple[str, ...] = ("de", "es", "fr", "it", "ja", "pt", "zh-cn", "zh-tw")
DEFAULT_MIN_CHARS = 40
DEFAULT_MIN_INVARIANT_JACCARD = 0.1

_XHTML = "{http://www.w3.org/1999/xhtml}"
_BLOCK_TAGS = {"p", "pre", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "dt"}
_HEADING_TAGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_SKIPPED_DIV_CLASSES = {"navheader", "navfooter", "toc", "list-of-tables", "list-of-figures", "list-of-examples"}
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")

PAIR_COLUMNS: tuple[str, ...] = ("id", "section", "en", "tgt")
SKIP_REASONS: tuple[str, ...] = (
    "caption", "code", "heading", "table", "term",  # position is not a paragraph
    "too_short", "untranslated", "invariant_mismatch",  # paragraph pair filtered out
    "section_structure_mismatch", "section_missing_en", "section_missing_tgt", "page_missing_tgt",
)


@dataclass(frozen=True)
class Block:
    """One text block of a rendered DocBook page.

    ``kind``: paragraph | code | table | heading | caption | term; ``section``: anchor id of the enclosing
    section (``""`` before the first heading); ``text``: whitespace-normalised text; ``invariants``: numbers
    and ``<code>`` literals, which a translation keeps unchanged.
    """

    kind: str
    section: str
    text: str
    invariants: frozenset[str] = frozenset()


@dataclass
class PairingResult:
    """Output of :func:`pair_blocks`: kept pairs, skipped positions with their reason, and counts per reason."""

    pairs: list[dict[str, str]] = field(default_factory=list)
    rejects: list[dict[str, str]] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    pair_invariants: list[tuple[frozenset[str], frozenset[str]]] = field(default_factory=list)

    def extend(self, other: PairingResult) -> None:
        """Append another result (another page) to this one."""
        self.pairs.extend(other.pairs)
        self.rejects.extend(other.rejects)
        self.skipped.update(other.skipped)
        self.pair_invariants.extend(other.pair_invariants)


def _local_name(element: ET.Element) -> str:
    return element.tag.removeprefix(_XHTML) if isinstance(element.tag, str) else ""


def _normalise(text: str) -> str:
    return " ".join(text.split())


def _block_kind(element: ET.Element, tag: str) -> str:
    if tag == "pre":
        return "code"
    if tag in ("td", "th"):
        return "table"
    if tag in _HEADING_TAGS:
        return "heading"
    if tag == "dt":
        return "term"
    if "title" in (element.get("class") or "").split():
        return "caption"  # table/figure titles rendered as <p class="title">
    return "paragraph"


def _heading_anchor(element: ET.Element) -> str | None:
    for anchor in element.iter(f"{_XHTML}a"):
        if anchor.get("id"):
            return anchor.get("id")
    return None


def _invariants(element: ET.Element, text: str) -> frozenset[str]:
    literals = {_normalise("".join(code.itertext())) for code in element.iter(f"{_XHTML}code")}
    return frozenset({literal for literal in literals if literal} | set(_NUMBER.findall(text)))


def extract_blocks(xhtml: str | bytes) -> list[Block]:
    """Return the text blocks of one DocBook-XSL XHTML page in document order (see the module docstring)."""
    root = ET.fromstring(xhtml)
    blocks: list[Block] = []
    section = ""

    def walk(element: ET.Element) -> None:
        nonlocal section
        tag = _local_name(element)
        if tag == "head" or (tag == "div" and _SKIPPED_DIV_CLASSES & set((element.get("class") or "").split())):
            return
        if tag in _BLOCK_TAGS:
            if tag in _HEADING_TAGS:
                section = _heading_anchor(element) or section
            text = _normalise("".join(element.itertext()))
            blocks.append(Block(_block_kind(element, tag), section, text, _invariants(element, text)))
            return  # a block's nested elements (a <p> inside a <td>) belong to it
        for child in element:
            walk(child)

    walk(root)
    return blocks


def _group_by_section(blocks: Iterable[Block]) -> dict[str, list[Block]]:
    groups: dict[str, list[Block]] = {}
    for block in blocks:
        groups.setdefault(block.section, []).append(block)
    return groups


def invariant_jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard similarity of two invariant sets; 1.0 when both are empty (nothing to disagree on)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _skip_reason(en: Block, tgt: Block, min_chars: int, min_invariant_jaccard: float) -> str | None:
    if en.kind != "paragraph":
        return en.kind  # code, table, heading, caption or term
    if len(en.text) < min_chars or len(tgt.text) < min_chars:
        return "too_short"
    if en.text == tgt.text:
        return "untranslated"
    both_have_invariants = bool(en.invariants) and bool(tgt.invariants)
    if both_have_invariants and invariant_jaccard(en.invariants, tgt.invariants) < min_invariant_jaccard:
        return "invariant_mismatch"
    return None


def pair_blocks(
    en_blocks: Sequence[Block],
    tgt_blocks: Sequence[Block],
    doc: str,
    min_chars: int = DEFAULT_MIN_CHARS,
    min_invariant_jaccard: float = DEFAULT_MIN_INVARIANT_JACCARD,
) -> PairingResult:
    """Pair the paragraphs of an English page with those of its translation, section by section.

    Inputs: blocks of both pages from :func:`extract_blocks`; ``doc`` the page name used in ids
    (``"ch03"``); thresholds as in the module docstring. Pair ids are ``"<doc>/<section>/<position>"``
    (position within the section, 0-based). Sections present on one side only are skipped as
    ``section_missing_tgt`` / ``section_missing_en``.
    """
    if min_chars < 1:
        raise ValueError(f"min_chars: expected a positive number of characters, got {min_chars!r}")
    if not 0.0 <= min_invariant_jaccard <= 1.0:
        raise ValueError(f"min_invariant_jaccard: expected a value in [0, 1], got {min_invariant_jaccard!r}")
    result = PairingResult()
    en_sections, tgt_sections = _group_by_section(en_blocks), _group_by_section(tgt_blocks)
    for section in [*en_sections, *(s for s in tgt_sections if s not in en_sections)]:
        en_group, tgt_group = en_sections.get(section, []), tgt_sections.get(section, [])
        section_reason = None
        if not tgt_group:
            section_reason = "section_missing_tgt"
        elif not en_group:
            section_reason = "section_missing_en"
        elif [b.kind for b in en_group] != [b.kind for b in tgt_group]:
            section_reason = "section_structure_mismatch"
        if section_reason is not None:
            result.skipped[section_reason] += max(len(en_group), len(tgt_group))
            result.rejects.append(
                {"id": f"{doc}/{section}/*", "section": section, "en": "", "tgt": "", "reason": section_reason}
            )
            continue
        for position, (en, tgt) in enumerate(zip(en_group, tgt_group)):
            row = {"id": f"{doc}/{section}/{position}", "section": section, "en": en.text, "tgt": tgt.text}
            reason = _skip_reason(en, tgt, min_chars, min_invariant_jaccard)
            if reason is None:
                result.pairs.append(row)
                result.pair_invariants.append((en.invariants, tgt.invariants))
            else:
                result.skipped[reason] += 1
                result.rejects.append({**row, "reason": reason})
    return result


def invariant_agreement(pair_invariants: Sequence[tuple[frozenset[str], frozenset[str]]]) -> dict[str, float | int]:
    """Alignment check: mean invariant Jaccard of the pairs vs. a misaligned control (target shifted by one).

    Only pairs with invariants on both sides count. Returns ``pairs_with_invariants``,
    ``mean_invariant_jaccard`` and ``mean_invariant_jaccard_shifted`` (0.0 when there is nothing to measure).
    """
    with_invariants = [(en, tgt) for en, tgt in pair_invariants if en and tgt]
    aligned = [invariant_jaccard(en, tgt) for en, tgt in with_invariants]
    shifted = [invariant_jaccard(a[0], b[1]) for a, b in zip(with_invariants, with_invariants[1:])]
    return {
        "pairs_with_invariants": len(aligned),
        "mean_invariant_jaccard": round(sum(aligned) / len(aligned), 4) if aligned else 0.0,
        "mean_invariant_jaccard_shifted": round(sum(shifted) / len(shifted), 4) if shifted else 0.0,
    }


def document_names(doc_dir: Path = DOC_DIR) -> list[str]:
    """Names of the English pages (``"ch03"`` for ``ch03.en.html``), sorted."""
    return sorted(path.name.removesuffix(".en.html") for path in doc_dir.glob("*.en.html"))


def pair_language(
    lang: str,
    doc_dir: Path = DOC_DIR,
    min_chars: int = DEFAULT_MIN_CHARS,
    min_invariant_jaccard: float = DEFAULT_MIN_INVARIANT_JACCARD,
) -> PairingResult:
    """Pair every page of the English guide in ``doc_dir`` with its ``lang`` translation (missing pages counted)."""
    total = PairingResult()
    for doc in tqdm(document_names(doc_dir), desc=f"debian-reference en-{lang}", unit="page"):
        tgt_path = doc_dir / f"{doc}.{lang}.html"
        if not tgt_path.exists():
            total.skipped["page_missing_tgt"] += 1
            total.rejects.append({"id": f"{doc}/*/*", "section": "", "en": "", "tgt": "", "reason": "page_missing_tgt"})
            continue
        en_blocks = extract_blocks((doc_dir / f"{doc}.en.html").read_bytes())
        tgt_blocks = extract_blocks(tgt_path.read_bytes())
        total.extend(pair_blocks(en_blocks, tgt_blocks, doc, min_chars, min_invariant_jaccard))
    return total


def build_debian_reference_pairs(
    out_dir: str | Path,
    langs: Sequence[str] = ("de", "fr", "es"),
    doc_dir: str | Path = DOC_DIR,
    min_chars: int = DEFAULT_MIN_CHARS,
    min_invariant_jaccard: float = DEFAULT_MIN_INVARIANT_JACCARD,
) -> dict[str, Path]:
    """Build en–``lang`` paragraph pairs for each language into local directory ``out_dir``.

    Returns ``{lang: path of debian-reference-en-<lang>.parquet}``. Installs ``debian-reference-en`` and
    ``debian-reference-<lang>`` when missing and possible (root + apt), else raises
    ``MissingDebianPackagesError`` naming them. Deterministic: same rows, same order on rerun.
    """
    if not langs:
        raise ValueError("langs: expected at least one target language code, got none")
    for lang in langs:
        if lang not in SUPPORTED_LANGUAGES:
            raise ValueError(f"langs: {lang!r} is not a Debian Reference translation; expected one of {SUPPORTED_LANGUAGES}")
    source_dir = Path(doc_dir)
    if source_dir == DOC_DIR:
        packages = ["debian-reference-en", *(f"debian-reference-{lang}" for lang in langs)]
        require_debian_packages(packages, asset="the Debian Reference paragraph pairs")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for lang in langs:
        result = pair_language(lang, source_dir, min_chars, min_invariant_jaccard)
        stem = f"debian-reference-en-{lang}"
        paths[lang] = out / f"{stem}.parquet"
        write_rows(result.rejects, (*PAIR_COLUMNS, "reason"), out / f"{stem}.rejects.parquet")
        counts = {
            "source": f"{source_dir} (Debian debian-reference-en, debian-reference-{lang})",
            "pairs": len(result.pairs),
            "min_chars": min_chars,
            "min_invariant_jaccard": min_invariant_jaccard,
            **invariant_agreement(result.pair_invariants),
            **{f"skipped_{reason}": result.skipped.get(reason, 0) for reason in SKIP_REASONS},
        }
        (out / f"{stem}.counts.json").write_text(json.dumps(counts, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        write_rows(result.pairs, PAIR_COLUMNS, paths[lang])  # last: the pairs files' presence marks the asset built
        logger.info("Debian Reference en-%s: %s", lang, counts)
    return paths
