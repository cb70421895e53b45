"""A run holds one official benchmark task's data at a time, and none once it is done with it: the checks keep only the
first task's read, which serves that task's run; every other task is read by its check and again when its turn comes
(so a suite of large benchmarks is never all in memory). A module-wide one-task cache kept the last task's data after
the run."""

import gc
import weakref

import numpy as np
import pytest

from interlingua.evaluation.runner import evaluate_models, select_tasks
from interlingua.evaluation.tasks import official_suite
from interlingua.evaluation.tasks.official_suite import discover_official_tasks


class _Letters:
    name = "letters"

    def encode(self, texts):
        return np.array([[t.count(c) for c in "abcdefghij"] + [1.0] for t in texts], dtype=float)


class _Vowels(_Letters):
    name = "vowels"

    def encode(self, texts):
        return np.array([[t.count(c) for c in "aeiou"] + [len(t), 1.0] for t in texts], dtype=float)


@pytest.fixture()
def data_dir(tmp_path):
    (tmp_path / "sts").mkdir()
    (tmp_path / "sts" / "STS.en-de.txt").write_text("abc\tabd\t4.0\naaa\tjjj\t0.5\nbed\tbead\t3.0\nfig\tgig\t2.0\n")
    (tmp_path / "tat").mkdir()
    (tmp_path / "tat" / "tatoeba.deu-eng.deu").write_text("aab\nccd\nefg\nhij\n")
    (tmp_path / "tat" / "tatoeba.deu-eng.eng").write_text("aab\nefg\nccd\nhij\n")
    return tmp_path


@pytest.fixture()
def reads(monkeypatch):
    """Each load of an STS or Tatoeba file: (what was read, a weak reference to the data it returned)."""
    seen = []

    def counted(name):
        real = getattr(official_suite, name)

        def load(*args):
            data = real(*args)
            seen.append((args, weakref.ref(data)))
            return data
        monkeypatch.setattr(official_suite, name, load)

    counted("load_sts2017_extended")
    counted("load_tatoeba")
    return seen


def _tasks(data_dir):
    return discover_official_tasks("sts17", data_dir / "sts") + discover_official_tasks("tatoeba", data_dir / "tat")


def _values(measurements):
    return [(m.model, m.task, m.language, m.metric, m.seed, m.value) for m in measurements]


def test_the_first_tasks_check_read_serves_its_run_and_later_tasks_are_read_again(data_dir, reads):
    tasks = select_tasks(_tasks(data_dir), ["all"])  # both checks read before the run
    gc.collect()
    assert len(reads) == 2 and reads[0][1]() is not None and reads[1][1]() is None  # the first task keeps its read
    first = evaluate_models({"letters": _Letters(), "vowels": _Vowels()}, tasks, [1, 2])
    # the first task's check read served both models and seeds; the second task's check read was let go, so the run
    # read it again, once for both
    assert len(reads) == 3 and reads[2][0] == reads[1][0]
    gc.collect()
    assert [ref() for _, ref in reads] == [None, None, None]  # the tasks are still held; their data is not
    second = evaluate_models({"letters": _Letters(), "vowels": _Vowels()}, tasks, [1, 2])
    assert len(reads) == 5 and [args for args, _ in reads[3:]] == [args for args, _ in reads[:2]]  # once more, each
    assert _values(second) == _values(first) and len(first) == 2 * 2 * (2 + 5)  # sts: 2 metrics, tatoeba: 5
    assert [m.model for m in first] == ["letters"] * 14 + ["vowels"] * 14  # encoder order, then task and seed


def test_a_run_holds_one_tasks_data_at_a_time(data_dir, reads):
    tasks = select_tasks(_tasks(data_dir), ["all"])
    held = []

    class _Watching(_Letters):
        def encode(self, texts):
            gc.collect()
            held.append(sum(ref() is not None for _, ref in reads))
            return super().encode(texts)

    evaluate_models({"a": _Watching(), "b": _Watching()}, tasks, [1])
    assert held and max(held) == 1


def test_a_refused_check_leaves_no_task_holding_what_it_read(data_dir, reads):
    tasks = _tasks(data_dir)
    (data_dir / "tat" / "tatoeba.deu-eng.eng").write_text("aab\n")  # unaligned: the second check refuses it
    with pytest.raises(ValueError):
        select_tasks(tasks, ["all"])
    gc.collect()
    assert len(reads) == 1 and reads[0][1]() is None  # the STS check's read went with the refusal
