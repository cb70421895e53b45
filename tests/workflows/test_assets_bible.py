"""Tests for the English–Spanish Bible bitext (diatheke/OSIS parsing, joining; real SWORD modules when installed)."""

import json

import pyarrow.parquet as pq
import pytest

from interlingua.workflows.assets.bible import (
    BOOKS,
    ENGLISH_MODULE,
    REQUIRED_PACKAGES,
    SPANISH_MODULE,
    Verse,
    build_bible_bitext,
    dump_module_with_diatheke,
    join_verses,
    parse_diatheke_osis,
    strip_osis_markup,
)
from interlingua.workflows.assets.debian_packages import installed_debian_packages

_missing = sorted(set(REQUIRED_PACKAGES) - installed_debian_packages(REQUIRED_PACKAGES))
needs_sword = pytest.mark.skipif(
    bool(_missing),
    reason=f"Debian packages not installed: {' '.join(_missing)} "
    f"(apt-get install -y --no-install-recommends {' '.join(REQUIRED_PACKAGES)})",
)


# --- markup stripping ---------------------------------------------------------------------------------------


def test_strip_keeps_words_and_drops_strongs_attributes():
    osis = '<w lemma="strong:H7225">In the beginning</w> <w lemma="strong:H430">God</w> created.'
    assert strip_osis_markup(osis) == "In the beginning God created."


def test_strip_removes_notes_and_titles_with_their_content():
    osis = 'Jesus wept.<note type="study">Greek: <hi>dakruo</hi></note> <title type="x">Heading</title>Then'
    assert strip_osis_markup(osis) == "Jesus wept. Then"


def test_strip_separates_words_glued_to_tags_and_fixes_punctuation_spacing():
    osis = '<w>hay allí</w>también<w>bdelio</w>: ¿<w>Con qué</w>? (<w>David</w>’s <w>son</w>) <milestone type="line"/>'
    assert strip_osis_markup(osis) == "hay allí también bdelio: ¿Con qué? (David’s son)"


def test_strip_decodes_entities_and_drops_paragraph_sign():
    assert strip_osis_markup("\u00b6 Salt &amp; light &lt;here&gt;") == "Salt & light <here>"


# --- diatheke output parsing ---------------------------------------------------------------------------------

DIATHEKE_SAMPLE = "\n".join(
    [
        "Genesis 1:1: In the <w>beginning</w> God created the heaven and the earth.",
        "A <w>Psalm</w> of <w>David</w>.   Psalms 3:1: <w>LORD</w>, how are they increased!",
        "III John 1:1: The elder unto Gaius.",
        "I John 1:1: That which was from the beginning.",
        "John 1:1: In the beginning was the Word.",
        "John 1:1: a second copy of the same reference",
        "Revelation of John 22:21: Amen.   <milestone type=\"line\"/>",
        "Genesis 1:2:",
        "garbage line without a reference",
        "",
        "(engKJV2006eb)",
    ]
)


def test_parse_maps_book_names_to_osis_ids_and_keeps_headings_as_text():
    parsed = parse_diatheke_osis(DIATHEKE_SAMPLE)
    assert list(parsed.verses) == ["Gen.1.1", "Ps.3.1", "3John.1.1", "1John.1.1", "John.1.1", "Rev.22.21", "Gen.1.2"]
    assert parsed.verses["Gen.1.1"].text == "In the beginning God created the heaven and the earth."
    assert parsed.verses["Ps.3.1"].text == "A Psalm of David. LORD, how are they increased!"
    assert parsed.verses["1John.1.1"].text == "That which was from the beginning."
    assert parsed.verses["Rev.22.21"].text == "Amen."
    assert parsed.verses["Gen.1.2"].text == ""
    assert parsed.verses_with_heading == 1


def test_parse_keeps_unparsed_lines_and_first_of_duplicates():
    parsed = parse_diatheke_osis(DIATHEKE_SAMPLE)
    assert parsed.unparsed_lines == ["garbage line without a reference"]
    assert parsed.duplicate_ids == ["John.1.1"]
    assert parsed.verses["John.1.1"].text == "In the beginning was the Word."


def test_book_table_has_the_66_books_with_unique_ids_and_names():
    assert len(BOOKS) == 66
    assert len({osis for osis, _ in BOOKS}) == 66 and len({name for _, name in BOOKS}) == 66
    assert BOOKS[0] == ("Gen", "Genesis") and BOOKS[-1] == ("Rev", "Revelation of John")


# --- joining -------------------------------------------------------------------------------------------------


def _verses(*items: tuple[str, int, int, str]) -> dict[str, Verse]:
    return {verse.id: verse for verse in (Verse(*item) for item in items)}


def test_join_pairs_by_reference_in_canonical_order_and_counts_rejects():
    english = _verses(("Rev", 1, 1, "The Revelation"), ("Gen", 1, 2, "And the earth"), ("Gen", 1, 1, "In the beginning"),
                      ("Num", 12, 16, "And afterward"), ("Gen", 2, 1, ""), ("Gen", 3, 1, "Now the serpent"))
    spanish = _verses(("Gen", 1, 1, "En el principio"), ("Rev", 1, 1, "La revelación"), ("Gen", 1, 2, "Y la tierra"),
                      ("Num", 12, 16, ""), ("Gen", 2, 1, ""), ("Exod", 1, 1, "Estos son"))
    joined = join_verses(english, spanish)
    assert [row["id"] for row in joined.pairs] == ["Gen.1.1", "Gen.1.2", "Rev.1.1"]
    assert joined.pairs[0] == {"id": "Gen.1.1", "book": "Gen", "en": "In the beginning", "es": "En el principio"}
    assert [(row["id"], row["reason"]) for row in joined.rejects] == [
        ("Gen.2.1", "empty_both"), ("Gen.3.1", "missing_es"), ("Exod.1.1", "missing_en"), ("Num.12.16", "empty_es")
    ]
    assert joined.rejects[1]["en"] == "Now the serpent"  # kept aside with its text
    assert joined.counts == {
        "verses_en": 6, "verses_es": 6, "references_union": 7, "pairs": 3,
        "rejected_missing_en": 1, "rejected_missing_es": 1, "rejected_empty_en": 0, "rejected_empty_es": 1,
        "rejected_empty_both": 1,
    }


# --- real SWORD modules --------------------------------------------------------------------------------------


@needs_sword
def test_real_modules_genesis_and_psalm_title():
    english = parse_diatheke_osis(dump_module_with_diatheke(ENGLISH_MODULE, "Gen 1:1-3"))
    spanish = parse_diatheke_osis(dump_module_with_diatheke(SPANISH_MODULE, "Gen 1:1-3"))
    assert english.verses["Gen.1.1"].text == "In the beginning God created the heaven and the earth."
    assert spanish.verses["Gen.1.1"].text == "EN el principio crió Dios los cielos y la tierra."
    assert list(english.verses) == list(spanish.verses) == ["Gen.1.1", "Gen.1.2", "Gen.1.3"]
    psalm = parse_diatheke_osis(dump_module_with_diatheke(ENGLISH_MODULE, "Ps 3:1-2"))
    assert psalm.verses["Ps.3.1"].text.startswith("A Psalm of David, when he fled from Absalom his son. LORD,")
    assert not psalm.verses["Ps.3.2"].text.startswith("A Psalm")  # no stale heading repeated
    assert not english.unparsed_lines and not psalm.unparsed_lines


@needs_sword
@pytest.mark.slow
def test_real_full_bitext_build_is_complete_and_deterministic(tmp_path):
    path = build_bible_bitext(tmp_path / "a")
    table = pq.read_table(path)
    assert table.column_names == ["id", "book", "en", "es"]
    counts = json.loads((tmp_path / "a" / "bible-en-es.counts.json").read_text())
    assert counts["verses_en"] == counts["verses_es"] == 31102
    assert counts["pairs"] == table.num_rows and 31000 <= table.num_rows <= 31102
    assert counts["pairs"] + sum(v for k, v in counts.items() if k.startswith("rejected_")) == 31102
    rejects = pq.read_table(tmp_path / "a" / "bible-en-es.rejects.parquet")
    assert rejects.num_rows == 31102 - table.num_rows
    rows = table.slice(0, 1).to_pylist()[0]
    assert rows == {"id": "Gen.1.1", "book": "Gen", "en": "In the beginning God created the heaven and the earth.",
                    "es": "EN el principio crió Dios los cielos y la tierra."}
    assert table.column("id")[-1].as_py() == "Rev.22.21"
    assert len(set(table.column("id").to_pylist())) == table.num_rows
    assert not any("<" in text for text in table.column("en").to_pylist())
    again = pq.read_table(build_bible_bitext(tmp_path / "b"))
    assert again.equals(table)
