"""``interlingua align`` without ``--save-params`` keeps its learned tables (the corpus vocabulary) in a private
folder under the state folder and removes it on exit, errors included: nothing lands in the system temp folder."""

import argparse
import tempfile

import pytest

from interlingua.workflows.commands import align

SRC = ["the house is small", "the book is big", "a small house", "the house", "big book"] * 4
TGT = ["das haus ist klein", "das buch ist gross", "ein kleines haus", "das haus", "grosses buch"] * 4


@pytest.fixture()
def folders(tmp_path, monkeypatch):
    system_tmp, state = tmp_path / "system-tmp", tmp_path / "state"
    system_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(system_tmp))
    monkeypatch.setenv("INTERLINGUA_HOME", str(state))
    (tmp_path / "s.txt").write_text("\n".join(SRC) + "\n")
    (tmp_path / "t.txt").write_text("\n".join(TGT) + "\n")
    return tmp_path, system_tmp, state


def _align(tmp_path) -> int:
    parser = argparse.ArgumentParser()
    align.add_arguments(parser)
    return align.run(parser.parse_args(["--src", str(tmp_path / "s.txt"), "--tgt", str(tmp_path / "t.txt"),
                                        "--out", str(tmp_path / "out.txt")]))


def _leftovers(system_tmp, state) -> list[str]:
    found = [p.name for p in system_tmp.iterdir() if "align" in p.name or p.name.startswith("interlingua")]
    if (state / "tmp").exists():
        found += [p.name for p in (state / "tmp").iterdir()]
    return sorted(found)


def test_learned_parameters_are_removed_after_the_run(folders):
    tmp_path, system_tmp, state = folders
    assert _align(tmp_path) == 0
    assert (tmp_path / "out.txt").read_text().count("\n") == len(SRC)
    assert (state / "tmp").is_dir() and _leftovers(system_tmp, state) == []


def test_learned_parameters_are_removed_when_alignment_fails(folders, monkeypatch):
    from interlingua.operators.align import bidirectional_aligner, fast_align_training

    tmp_path, system_tmp, state = folders
    seen = []
    learn = fast_align_training.learn_fast_align

    def recording_learn(pairs, directory, *args, **kwargs):
        seen.append(directory)
        return learn(pairs, directory, *args, **kwargs)

    def failing_align(self, sources, targets):  # a learning run decodes with the tables it holds (not loaded back)
        raise RuntimeError("disk full")

    monkeypatch.setattr(fast_align_training, "learn_fast_align", recording_learn)
    monkeypatch.setattr(bidirectional_aligner.BidirectionalAligner, "align_pharaoh", failing_align)
    with pytest.raises(RuntimeError, match="disk full"):
        _align(tmp_path)
    assert seen and seen[0].startswith(str(state / "tmp"))  # the tables were learned under the state folder
    assert _leftovers(system_tmp, state) == []
