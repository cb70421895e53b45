"""Tests for the Debian Reference paragraph pairs (XHTML block extraction, pairing; real guide when installed)."""

import json

import pyarrow.parquet as pq
import pytest

from interlingua.workflows.assets.debian_packages import installed_debian_packages
from interlingua.workflows.assets.debian_reference import (
    Block,
    build_debian_reference_pairs,
    extract_blocks,
    invariant_agreement,
    invariant_jaccard,
    pair_blocks,
)

_PACKAGES = ("debian-reference-en", "debian-reference-de", "debian-reference-fr", "debian-reference-es")
_missing = sorted(set(_PACKAGES) - installed_debian_packages(_PACKAGES))
needs_guide = pytest.mark.skipif(
    bool(_missing),
    reason=f"Debian packages not installed: {' '.join(_missing)} "
    f"(apt-get install -y --no-install-recommends {' '.join(_PACKAGES)})",
)

PAGE = """<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Chapter 3</title></head><body>
<div class="navheader"><p>Navigation text that must be ignored entirely.</p></div>
<div class="chapter"><div class="toc"><dl class="toc"><dt>3.1. An overview</dt></dl></div>
<div class="section"><h2 class="title"><a id="_overview"/>3.1. {title}</h2>
<p>{para1}</p>
<pre class="screen">$ ls -l /boot</pre>
<div class="table"><p class="title"><b>{caption}</b></p>
<table><tr><td><p>{cell}</p></td><th>x</th></tr></table></div>
<div class="itemizedlist"><ul><li><p>{item}</p></li></ul></div>
</div></div>
<div class="navfooter"><p>Footer navigation text that must be ignored too.</p></div>
</body></html>"""

EN_PAGE = PAGE.format(
    title="An overview",
    para1="The computer runs <code class=\"literal\">grub-install</code> at stage 2 of 4 of the boot.",
    caption="Table 3.1. List of boot loaders",
    cell="A boot loader cell text",
    item="Short item.",
)
DE_PAGE = PAGE.format(
    title="Ein Überblick",
    para1="Der Rechner führt <code class=\"literal\">grub-install</code> in Stufe 2 von 4 des Bootens aus.",
    caption="Tabelle 3.1. Liste der Bootloader",
    cell="Ein Bootloader Zellentext",
    item="Kurzer Punkt.",
)


def test_extract_blocks_kinds_sections_and_invariants():
    blocks = extract_blocks(EN_PAGE)
    assert [(b.kind, b.section) for b in blocks] == [
        ("heading", "_overview"), ("paragraph", "_overview"), ("code", "_overview"), ("caption", "_overview"),
        ("table", "_overview"), ("table", "_overview"), ("paragraph", "_overview"),
    ]
    assert blocks[1].text == "The computer runs grub-install at stage 2 of 4 of the boot."
    assert blocks[1].invariants == frozenset({"grub-install", "2", "4"})
    assert blocks[4].text == "A boot loader cell text"  # the <p> inside the <td> is part of the cell
    assert not any("navigation" in b.text.lower() for b in blocks)  # navheader/navfooter/toc skipped


def test_pair_blocks_keeps_paragraphs_and_counts_each_skip_reason():
    result = pair_blocks(extract_blocks(EN_PAGE), extract_blocks(DE_PAGE), doc="ch03")
    assert result.pairs == [
        {
            "id": "ch03/_overview/1",
            "section": "_overview",
            "en": "The computer runs grub-install at stage 2 of 4 of the boot.",
            "tgt": "Der Rechner führt grub-install in Stufe 2 von 4 des Bootens aus.",
        }
    ]
    assert dict(result.skipped) == {"heading": 1, "code": 1, "caption": 1, "table": 2, "too_short": 1}
    assert [r["reason"] for r in result.rejects] == ["heading", "code", "caption", "table", "table", "too_short"]
    assert result.pair_invariants == [(frozenset({"grub-install", "2", "4"}),) * 2]


def _para(section: str, text: str, invariants: frozenset[str] = frozenset()) -> Block:
    return Block("paragraph", section, text, invariants)


def test_pair_blocks_skips_a_mismatched_section_but_pairs_the_others():
    en = [_para("a", "First English paragraph that is long enough."), _para("b", "Second English paragraph, long enough.")]
    tgt = [
        _para("a", "Erster deutscher Absatz, der lang genug ist."),
        _para("b", "Zweiter deutscher Absatz, lang genug dafür."),
        _para("b", "Ein zusätzlicher Absatz nur in der Übersetzung."),
    ]
    result = pair_blocks(en, tgt, doc="d")
    assert [p["id"] for p in result.pairs] == ["d/a/0"]
    assert dict(result.skipped) == {"section_structure_mismatch": 2}
    assert result.rejects[0]["id"] == "d/b/*" and result.rejects[0]["reason"] == "section_structure_mismatch"


def test_pair_blocks_sections_missing_untranslated_and_invariant_mismatch():
    en = [
        _para("a", "Run the command to see the version number today.", frozenset({"uname -r", "2"})),
        _para("a", "This paragraph was left untranslated by po4a here."),
        _para("only_en", "A section that the translation does not have."),
    ]
    tgt = [
        _para("a", "Führen Sie den Befehl aus, um die Version zu sehen.", frozenset({"lsb_release", "7"})),
        _para("a", "This paragraph was left untranslated by po4a here."),
        _para("only_tgt", "Ein Abschnitt, den es nur in der Übersetzung gibt."),
    ]
    result = pair_blocks(en, tgt, doc="d")
    assert result.pairs == []
    assert dict(result.skipped) == {
        "invariant_mismatch": 1, "untranslated": 1, "section_missing_tgt": 1, "section_missing_en": 1
    }


def test_pair_blocks_validates_options():
    with pytest.raises(ValueError, match="min_chars"):
        pair_blocks([], [], doc="d", min_chars=0)
    with pytest.raises(ValueError, match="min_invariant_jaccard"):
        pair_blocks([], [], doc="d", min_invariant_jaccard=1.5)


def test_invariant_jaccard_and_shifted_control():
    a, b, c = frozenset({"1", "ls"}), frozenset({"1", "cp"}), frozenset({"9"})
    assert invariant_jaccard(a, b) == pytest.approx(1 / 3)
    assert invariant_jaccard(frozenset(), frozenset()) == 1.0
    agreement = invariant_agreement([(a, a), (b, b), (c, c), (frozenset(), frozenset({"x"}))])
    assert agreement == {"pairs_with_invariants": 3, "mean_invariant_jaccard": 1.0,
                         "mean_invariant_jaccard_shifted": round((1 / 3 + 0.0) / 2, 4)}


def test_build_rejects_unknown_language(tmp_path):
    with pytest.raises(ValueError, match="langs: 'xx'"):
        build_debian_reference_pairs(tmp_path, langs=("xx",))


@needs_guide
def test_real_guide_german_pairs_are_aligned(tmp_path):
    paths = build_debian_reference_pairs(tmp_path, langs=("de",))
    table = pq.read_table(paths["de"])
    assert table.column_names == ["id", "section", "en", "tgt"]
    rows = {row["id"]: row for row in table.to_pylist()}
    assert len(rows) == table.num_rows >= 1500  # ids are unique
    first = rows["ch03/_an_overview_of_the_boot_strap_process/1"]
    assert first["en"].startswith("The computer system undergoes several phases of boot strap processes")
    assert first["tgt"].startswith("Das Computer-System durchläuft verschiedene Phasen des Bootstrap-Prozesses")
    assert all(len(r["en"]) >= 40 and len(r["tgt"]) >= 40 and r["en"] != r["tgt"] for r in rows.values())
    counts = json.loads((tmp_path / "debian-reference-en-de.counts.json").read_text())
    assert counts["pairs"] == table.num_rows
    # alignment check: shared numbers/commands far above the shifted (misaligned) control
    assert counts["mean_invariant_jaccard"] > 0.8 > 0.3 > counts["mean_invariant_jaccard_shifted"]
    rejects = pq.read_table(tmp_path / "debian-reference-en-de.rejects.parquet").column("reason").to_pylist()
    assert rejects.count("code") == counts["skipped_code"] > 0


@needs_guide
@pytest.mark.slow
def test_real_guide_all_languages_deterministic(tmp_path):
    first = build_debian_reference_pairs(tmp_path / "a")
    second = build_debian_reference_pairs(tmp_path / "b")
    assert set(first) == {"de", "fr", "es"}
    for lang in first:
        table = pq.read_table(first[lang])
        assert table.num_rows >= 1000
        assert table.equals(pq.read_table(second[lang]))
