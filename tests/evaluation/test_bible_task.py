"""The pack's Bible retrieval task keeps no held-out verse whose English or Spanish text a training verse has."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interlingua.evaluation.pack.bible_task import BIBLE_FILE, bible_test_indices, build_bible_retrieval
from interlingua.evaluation.splits import bible_heldout_split

IDS = [f"Gen.{c}.{v}" for c in range(1, 11) for v in range(1, 31)]
HELD = [i for i, held in enumerate(bible_heldout_split(IDS)) if held]
TRAINING = [i for i in range(len(IDS)) if i not in HELD]


def _columns():
    return {"id": list(IDS), "en": [f"verse {i} in english" for i in range(len(IDS))],
            "es": [f"versiculo {i} en palabras" for i in range(len(IDS))]}


def _build(tmp_path, columns):
    (tmp_path / "assets").mkdir()
    pq.write_table(pa.table(columns), tmp_path / "assets" / BIBLE_FILE)
    entry = build_bible_retrieval(tmp_path / "assets", tmp_path, max_pairs=1000, seed=0)
    return entry, pq.read_table(tmp_path / "bible_retrieval.parquet").to_pydict()


def test_the_table_has_several_heldout_verses():
    assert len(HELD) >= 4 and len(TRAINING) > 200


@pytest.mark.parametrize("side", ["en", "es"])
def test_heldout_verse_with_a_training_verse_text_is_dropped_and_counted(tmp_path, side):
    columns = _columns()
    leaked, clean = HELD[0], HELD[1]
    columns[side][leaked] = "  " + columns[side][TRAINING[5]].replace(" ", "   ") + " "  # same text, other spacing
    entry, table = _build(tmp_path, columns)
    assert IDS[leaked] not in table["id"] and IDS[clean] in table["id"]
    assert table["id"] == [IDS[i] for i in HELD if i != leaked]
    assert entry["rejected"] == {"text_in_training": 1}
    assert entry["size"] == len(HELD) - 1 and entry["heldout_verses"] == len(HELD)


def test_clean_heldout_verses_are_all_kept(tmp_path):
    entry, table = _build(tmp_path, _columns())
    assert table["id"] == [IDS[i] for i in HELD] and entry["rejected"] == {}


def test_heldout_verses_sharing_a_text_keep_the_first_unless_training_has_it():
    columns = _columns()
    en, es = columns["en"], columns["es"]
    en[HELD[1]] = en[HELD[0]]  # shared by two test verses only: ambiguous, the second goes
    es[HELD[3]] = es[HELD[2]] = es[TRAINING[0]]  # shared with training too: both go
    kept, heldout, rejected = bible_test_indices(IDS, en, es)
    assert kept == [HELD[0], *HELD[4:]] and heldout == len(HELD)
    assert rejected == {"duplicate_text": 1, "text_in_training": 2}


def test_pack_manifest_records_the_builder_version(tmp_path):
    from interlingua.evaluation.pack.build import PACK_VERSION, PackSizes, build_pack

    (tmp_path / "assets").mkdir()
    pq.write_table(pa.table(_columns()), tmp_path / "assets" / BIBLE_FILE)
    build_pack(tmp_path / "assets", tmp_path / "pack", PackSizes(clustering_items=10, title_lead_pairs=5), seed=0)
    manifest = json.loads((tmp_path / "pack" / "manifest.json").read_text())
    assert manifest["version"] == PACK_VERSION == 2


@pytest.mark.slow
def test_real_bible_has_no_test_verse_whose_text_is_in_training(tmp_path):
    from interlingua.evaluation.pack.pairs import normalize_text
    from interlingua.workflows.assets.bible import REQUIRED_PACKAGES, build_bible_bitext
    from interlingua.workflows.assets.debian_packages import installed_debian_packages

    missing = sorted(set(REQUIRED_PACKAGES) - installed_debian_packages(REQUIRED_PACKAGES))
    if missing:
        pytest.skip(f"Debian packages not installed: {' '.join(missing)}")
    path = build_bible_bitext(tmp_path / "assets")
    rows = pq.read_table(path).to_pydict()
    entry = build_bible_retrieval(path.parent, tmp_path, max_pairs=100_000, seed=0)
    test = pq.read_table(tmp_path / "bible_retrieval.parquet").to_pydict()
    heldout = bible_heldout_split(rows["id"])
    for side, column in (("en", "source"), ("es", "target")):
        trained = {normalize_text(t) for t, held in zip(rows[side], heldout) if not held}
        assert not [t for t in test[column] if normalize_text(t) in trained]
    assert entry["rejected"].get("text_in_training", 0) > 0  # the Bible repeats verses: some were dropped
    assert entry["size"] + sum(entry["rejected"].values()) == entry["heldout_verses"] == int(heldout.sum())
