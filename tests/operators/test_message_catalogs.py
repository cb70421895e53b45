"""GNU .mo parsing against GNU msgfmt's output and Python's gettext, and the pair filters."""

from __future__ import annotations

import gettext
import io
import shutil
import struct
import subprocess

import pytest

from interlingua.operators.bitext.message_catalogs import (CatalogEntry, CatalogFormatError, CatalogPairSettings,
                                                           catalog_pairs, read_mo)

PO = r'''msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\n"

msgid "The package list could not be read from the server."
msgstr "Die Paketliste konnte nicht vom Server gelesen werden."

msgctxt "menu"
msgid "Open the file in a new window"
msgstr "Die Datei in einem neuen Fenster öffnen"

msgid "One file was removed from the archive."
msgid_plural "%d files were removed from the archive."
msgstr[0] "Eine Datei wurde aus dem Archiv entfernt."
msgstr[1] "%d Dateien wurden aus dem Archiv entfernt."

msgid "Usage: %s [OPTION]... FILE\n"
"Copy the file to the destination directory."
msgstr "Aufruf: %s [OPTION]... DATEI\n"
"Die Datei in das Zielverzeichnis kopieren."

msgid "Not translated at all in this catalog, sadly."
msgstr ""
'''


def write_mo(entries: list[tuple[bytes, bytes]], order: str = "<") -> bytes:
    """A .mo file written from the format's description (sorted originals, no hash table)."""
    entries = sorted(entries)
    n = len(entries)
    header = 28
    originals_at, translations_at = header, header + 8 * n
    data_at = translations_at + 8 * n
    blob = b""
    descriptors = [[], []]
    for side in (0, 1):
        for entry in entries:
            descriptors[side].append((len(entry[side]), data_at + len(blob)))
            blob += entry[side] + b"\0"
    out = struct.pack(order + "7I", 0x950412DE, 0, n, originals_at, translations_at, 0, 0)
    for side in (0, 1):
        out += b"".join(struct.pack(order + "2I", *d) for d in descriptors[side])
    return out + blob


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> bytes:
    if shutil.which("msgfmt") is None:
        pytest.skip("GNU msgfmt is not installed")
    folder = tmp_path_factory.mktemp("po")
    (folder / "de.po").write_text(PO, encoding="utf-8")
    subprocess.run(["msgfmt", "-o", str(folder / "de.mo"), str(folder / "de.po")], check=True)
    return (folder / "de.mo").read_bytes()


def test_msgfmt_output_parses_to_the_po_entries(compiled):
    entries = {(e.context, e.msgid): e for e in read_mo(compiled)}
    assert entries[("", "The package list could not be read from the server.")].translations == (
        "Die Paketliste konnte nicht vom Server gelesen werden.",)
    assert entries[("menu", "Open the file in a new window")].translations == ("Die Datei in einem neuen Fenster öffnen",)
    plural = entries[("", "One file was removed from the archive.")]
    assert plural.msgid_plural == "%d files were removed from the archive."
    assert plural.translations == ("Eine Datei wurde aus dem Archiv entfernt.", "%d Dateien wurden aus dem Archiv entfernt.")
    assert "Not translated at all in this catalog, sadly." not in {e.msgid for e in entries.values()}  # msgfmt drops it


def test_agrees_with_python_gettext(compiled):
    reference = gettext.GNUTranslations(io.BytesIO(compiled))
    entries = [entry for entry in read_mo(compiled) if entry.msgid]
    assert len(entries) == 4  # the PO's translated messages; the untranslated one is not compiled
    for entry in entries:
        if entry.msgid_plural:
            assert reference.ngettext(entry.msgid, entry.msgid_plural, 1) == entry.translations[0]
            assert reference.ngettext(entry.msgid, entry.msgid_plural, 5) == entry.translations[1]
        elif entry.context:
            assert reference.pgettext(entry.context, entry.msgid) == entry.translations[0]
        else:
            assert reference.gettext(entry.msgid) == entry.translations[0]


@pytest.mark.parametrize("order", ["<", ">"])
def test_both_byte_orders_and_declared_charset(order):
    header = b"Content-Type: text/plain; charset=ISO-8859-1\n"
    data = write_mo([(b"", header), (b"Summary of the changes in this release", "Übersicht der Änderungen".encode("latin-1"))], order)
    entries = read_mo(data)
    assert [(e.msgid, e.translations) for e in entries][1] == ("Summary of the changes in this release",
                                                               ("Übersicht der Änderungen",))


@pytest.mark.parametrize("data, message", [
    (b"\x00" * 10, "too short"),
    (b"\x12\x34\x56\x78" + b"\x00" * 24, "bad magic"),
    (struct.pack("<7I", 0x950412DE, 0, 1, 28, 36, 0, 0) + struct.pack("<2I", 5, 1000), "beyond the end"),
    (struct.pack("<7I", 0x950412DE, 0, 3, 28, 36, 0, 0), "beyond the end"),
    (struct.pack("<7I", 0x950412DE, 7 << 16, 0, 28, 28, 0, 0), "revision"),
])
def test_malformed_catalogs_raise_a_clear_error(data, message):
    with pytest.raises(CatalogFormatError, match=message):
        read_mo(data)


def test_pairs_and_reasons():
    settings = CatalogPairSettings(min_chars=20, max_chars=80, min_letter_share=0.6)
    entries = [
        CatalogEntry("", "", "", ("Content-Type: text/plain; charset=UTF-8",)),
        CatalogEntry("", "Could not open the\n   configuration file.", "", ("Die Konfigurationsdatei konnte nicht geöffnet werden.",)),
        CatalogEntry("", "Nothing translated for this one.", "", ("",)),
        CatalogEntry("", "Same text in both languages here", "", ("Same text in both languages here",)),
        CatalogEntry("", "Too short", "", ("Zu kurz",)),
        CatalogEntry("", "x" * 81, "", ("y" * 81,)),
        CatalogEntry("", "%s: %s (%d) -> %s [%s] {0} %(name)s", "", ("%s: %s (%d) -> %s [%s] {0} %(name)s !",)),
        CatalogEntry("", "One file was removed.", "%d files were removed.", ("Eine Datei wurde entfernt.", "%d Dateien")),
    ]
    kept, rejected = catalog_pairs(entries, settings)
    assert kept == [("Could not open the configuration file.", "Die Konfigurationsdatei konnte nicht geöffnet werden."),
                    ("One file was removed.", "Eine Datei wurde entfernt.")]
    assert [r[2] for r in rejected] == ["header", "untranslated", "identical", "too_short", "too_long", "placeholders"]


def test_settings_are_validated():
    with pytest.raises(ValueError, match="min_chars"):
        CatalogPairSettings(min_chars=50, max_chars=10)
    with pytest.raises(ValueError, match="min_letter_share"):
        CatalogPairSettings(min_letter_share=1.5)
