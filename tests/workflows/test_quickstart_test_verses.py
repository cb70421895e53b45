"""The quickstart evaluates on the held-out Bible verses whose text no training verse has (the pack's rule)."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interlingua.core.errors import UserError
from interlingua.evaluation.splits import bible_heldout_split
from interlingua.workflows.quickstart import _test_verses

IDS = [f"Gen.{c}.{v}" for c in range(1, 11) for v in range(1, 31)]
HELD = [i for i, held in enumerate(bible_heldout_split(IDS)) if held]
assert 0 not in HELD and len(HELD) >= 4


def _bitext(tmp_path, en, es):
    path = tmp_path / "bitext.parquet"
    pq.write_table(pa.table({"id": IDS, "en": en, "es": es}), path)
    return path


def test_heldout_verse_with_training_text_is_not_evaluated(tmp_path):
    en = [f"verse {i}" for i in range(len(IDS))]
    es = [f"versiculo {i}" for i in range(len(IDS))]
    es[HELD[0]] = es[0]  # Gen.1.1 is a training verse
    (src, tgt), note = _test_verses(_bitext(tmp_path, en, es), pairs=500)
    assert src == [en[i] for i in HELD[1:]] and tgt == [es[i] for i in HELD[1:]]
    assert note == (f"; of the bitext's {len(HELD)} held-out verses, 1 dropped from the test verses: their text "
                    "is in training (text_in_training)")
    (src, _), _ = _test_verses(_bitext(tmp_path, en, es), pairs=2)
    assert src == [en[i] for i in HELD[1:3]]


def test_no_test_verse_left_is_a_user_error(tmp_path):
    en = ["the same verse"] * len(IDS)
    es = [f"versiculo {i}" for i in range(len(IDS))]
    with pytest.raises(UserError, match=f"none of its {len(HELD)} held-out verses can be a test verse: their text "
                                        r"is in training \(text_in_training\); held-out verses need"):
        _test_verses(_bitext(tmp_path, en, es), pairs=500)


def test_several_reasons_are_each_counted_in_words(tmp_path):
    en = [f"verse {i}" for i in range(len(IDS))]
    es = [f"versiculo {i}" for i in range(len(IDS))]
    es[HELD[0]] = es[0]  # text in training
    en[HELD[1]] = ""  # a side empty
    en[HELD[3]] = en[HELD[2]]  # repeats an earlier test verse
    _, note = _test_verses(_bitext(tmp_path, en, es), pairs=500)
    assert note == (f"; of the bitext's {len(HELD)} held-out verses, 3 dropped from the test verses: 1 as their "
                    "text repeats an earlier test verse's (duplicate_text), 1 as their text is in training "
                    "(text_in_training), 1 as a side is empty (too_short)")
