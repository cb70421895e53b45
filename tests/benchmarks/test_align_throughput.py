"""benchmarks/align_throughput.py compares ours with plain fast_align on the same parameters: by default ours decodes
the folder's pruned tables (the entries plain fast_align reads from forward.bin / reverse.bin), with --tables unpruned
the unpruned ones the interlingua learner keeps too."""

from __future__ import annotations

import numpy as np
import pytest

from interlingua.benchmarks import align_throughput
from interlingua.operators.align import bidirectional_aligner
from interlingua.operators.align.fast_align_training import learn_fast_align
from interlingua.operators.align.lexical_table import read_systran_table

from ..operators.test_align_fast_align import synthetic_corpus


@pytest.fixture(scope="module")
def bitext(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench")
    pairs = synthetic_corpus(50, seed=4)
    learned = learn_fast_align(pairs, str(folder / "fa"))
    (folder / "s.txt").write_text("".join(" ".join(s) + "\n" for s, _ in pairs), encoding="utf-8")
    (folder / "t.txt").write_text("".join(" ".join(t) + "\n" for _, t in pairs), encoding="utf-8")
    return folder, learned


@pytest.mark.parametrize("tables", ["pruned", "unpruned"])
def test_ours_decodes_the_tables_asked_for(bitext, monkeypatch, capsys, tables):
    folder, learned = bitext
    decoded = []

    class Recording(bidirectional_aligner.BidirectionalAligner):
        def __init__(self, parameters, *args, **kwargs):
            decoded.append(parameters)
            super().__init__(parameters, *args, **kwargs)

    monkeypatch.setattr(bidirectional_aligner, "BidirectionalAligner", Recording)
    argv = ["--src", str(folder / "s.txt"), "--tgt", str(folder / "t.txt"), "--params", str(folder / "fa"),
            "--rounds", "1", "--workers", "--eflomal-limit", "0"]
    align_throughput.main(argv + ([] if tables == "pruned" else ["--tables", "unpruned"]))
    [parameters] = decoded
    expected = learned if tables == "pruned" else learned.unpruned
    for direction in ("forward", "reverse"):
        table = getattr(parameters, direction).table
        assert np.array_equal(table.keys, getattr(expected, direction).table.keys)
        assert np.array_equal(table.probabilities, getattr(expected, direction).table.probabilities)
        plain = read_systran_table(str(folder / "fa" / f"{direction}.bin"))  # what plain fast_align decodes
        assert np.array_equal(table.keys, plain.keys) == (tables == "pruned")
    sizes = f"{parameters.forward.table.keys.size:,} + {parameters.reverse.table.keys.size:,} entries"
    assert f"50 sentence pairs, grow-diag-final-and, 1 interleaved rounds; ours decodes the {tables} tables ({sizes})" \
        in capsys.readouterr().out
