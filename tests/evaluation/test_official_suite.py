"""`interlingua eval --data NAME=DIR` on small official-format files: discovery and values equal to the
metric functions applied directly."""

import argparse
import json

import numpy as np
import pytest

from interlingua.evaluation.metrics.alignment_uniformity import alignment
from interlingua.evaluation.metrics.retrieval import bitext_retrieval_accuracy
from interlingua.evaluation.metrics.sts import sts_correlations
from interlingua.evaluation.tasks.official_suite import discover_official_tasks
from interlingua.workflows.commands import eval as eval_command

ENCODER_MODULE = r'''
import numpy as np

class LetterCounts:
    name = "letter-counts"
    def encode(self, texts):
        return np.array([[t.count(c) for c in "abcdefghij"] + [1.0] for t in texts], dtype=float)

def make():
    return LetterCounts()
'''


def _letters(texts):
    return np.array([[t.count(c) for c in "abcdefghij"] + [1.0] for t in texts], dtype=float)


@pytest.fixture()
def data_dir(tmp_path):
    sts = [("abc", "abd", 4.0), ("aaa", "jjj", 0.5), ("bed", "bead", 3.0), ("fig", "gig", 2.0)]
    (tmp_path / "sts").mkdir()
    (tmp_path / "sts" / "STS.en-de.txt").write_text("".join(f"{a}\t{b}\t{s}\n" for a, b, s in sts))
    (tmp_path / "tat").mkdir()
    (tmp_path / "tat" / "tatoeba.deu-eng.deu").write_text("aab\nccd\nefg\nhij\n")
    (tmp_path / "tat" / "tatoeba.deu-eng.eng").write_text("aab\nefg\nccd\nhij\n")
    (tmp_path / "qam").mkdir()
    (tmp_path / "qam" / "QAM.train").write_text("".join(f"{q}\t{p}\t{l}\n" for q, p, l in
                                                        [("aa", "aa", 1), ("aa", "jj", 0), ("bb", "bb", 1), ("bb", "ff", 0)] * 3))
    for lang in ("de", "fr"):
        (tmp_path / "qam" / f"QAM.dev.{lang}").write_text("cc\tcc\t1\ncc\thh\t0\n")
        (tmp_path / "qam" / f"QAM.test.{lang}").write_text("dd\tdd\t1\ndd\tee\t0\n")
    return tmp_path


def test_discovery_names_tasks_by_language(data_dir):
    assert [(t.name, t.language) for t in discover_official_tasks("tatoeba", data_dir / "tat")] == [("tatoeba", "deu-en")]
    assert [(t.name, t.language) for t in discover_official_tasks("qam", data_dir / "qam")] == [("qam", "de,fr")]
    with pytest.raises(ValueError, match="no bucc files"):
        discover_official_tasks("bucc", data_dir / "tat")
    with pytest.raises(ValueError, match="benchmark must be"):
        discover_official_tasks("glue", data_dir)


def test_eval_cli_with_official_data(data_dir, tmp_path, monkeypatch):
    (tmp_path / "letters_encoder.py").write_text(ENCODER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    parser = argparse.ArgumentParser()
    eval_command.add_arguments(parser)
    out = tmp_path / "out"
    args = parser.parse_args(["--model", "py:letters_encoder:make", "--seeds", "1", "--pack", str(tmp_path / "no-pack"),
                              "--data", f"sts17={data_dir / 'sts'}", "--data", f"tatoeba={data_dir / 'tat'}",
                              "--data", f"qam={data_dir / 'qam'}", "--out", str(out), "--no-cache"])
    assert eval_command.run(args) == 0
    values = {(m["task"], m["metric"]): m["value"] for m in json.loads((out / "results.json").read_text())["measurements"]}
    lines = (data_dir / "sts" / "STS.en-de.txt").read_text().splitlines()
    first, second, gold = zip(*(line.split("\t") for line in lines))
    expected = sts_correlations(_letters(first), _letters(second), np.array(gold, dtype=float))
    assert values[("sts17", "spearman")] == pytest.approx(expected["spearman"])
    src = (data_dir / "tat" / "tatoeba.deu-eng.deu").read_text().splitlines()
    tgt = (data_dir / "tat" / "tatoeba.deu-eng.eng").read_text().splitlines()
    assert values[("tatoeba", "accuracy")] == pytest.approx(bitext_retrieval_accuracy(_letters(src), _letters(tgt))["average"])
    assert values[("tatoeba", "accuracy")] == pytest.approx(50.0)
    assert values[("tatoeba", "alignment")] == pytest.approx(alignment(_letters(src), _letters(tgt)))  # lines 2 and 3 of the English file are swapped
    assert {("qam", "de"), ("qam", "fr"), ("qam", "accuracy"), ("qam", "best_C")} <= set(values)
