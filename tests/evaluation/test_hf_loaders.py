"""HF ``datasets`` loaders on a local dataset folder (no hub access)."""

import pytest

from interlingua.evaluation.data.hf import load_hf_labelled_pairs, load_hf_labelled_texts, load_hf_scored_pairs


@pytest.fixture()
def dataset_dir(tmp_path):
    (tmp_path / "test.csv").write_text("premise,hypothesis,label,score\nIl pleut.,Il fait beau.,2,0.5\nA,B,0,4.0\n")
    return str(tmp_path)


def test_hf_loaders_read_named_columns(dataset_dir):
    pairs = load_hf_labelled_pairs(dataset_dir, None, "test", "premise", "hypothesis", "label")
    assert (pairs.first, pairs.second, pairs.labels) == (["Il pleut.", "A"], ["Il fait beau.", "B"], ["2", "0"])
    assert load_hf_scored_pairs(dataset_dir, None, "test", "premise", "hypothesis", "score").scores == [0.5, 4.0]
    assert load_hf_labelled_texts(dataset_dir, None, "test", "premise", "label").texts == ["Il pleut.", "A"]
    with pytest.raises(ValueError, match="lacks columns"):
        load_hf_labelled_texts(dataset_dir, None, "test", "sentence", "label")
