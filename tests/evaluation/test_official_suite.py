"""`interlingua eval --data NAME=DIR` on small official-format files: discovery and values equal to the
metric functions applied directly."""

import argparse
import json
import re

import numpy as np
import pytest

from interlingua.evaluation.metrics.alignment_uniformity import alignment
from interlingua.evaluation.metrics.retrieval import bitext_retrieval_accuracy
from interlingua.evaluation.metrics.sts import sts_correlations
from interlingua.evaluation.tasks.official_suite import EXPECTED_FILES, OFFICIAL_BENCHMARKS, discover_official_tasks
from interlingua.workflows.commands import eval as eval_command
from letter_encoder import LETTER_ENCODER_MODULE

ENCODER_MODULE = LETTER_ENCODER_MODULE


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
    (tmp_path / "qam" / "QAM.dev.en").write_text("aa\taa\t1\nbb\tff\t0\n")
    return tmp_path


def test_discovery_names_tasks_by_language(data_dir):
    # the label is spelled as the files are (tatoeba.deu-eng.*), as their errors name it
    assert [(t.name, t.language) for t in discover_official_tasks("tatoeba", data_dir / "tat")] == [("tatoeba", "deu-eng")]
    assert [(t.name, t.language) for t in discover_official_tasks("qam", data_dir / "qam")] == [("qam", "de,fr")]
    with pytest.raises(ValueError, match="no bucc files"):
        discover_official_tasks("bucc", data_dir / "tat")
    with pytest.raises(ValueError, match="benchmark must be"):
        discover_official_tasks("glue", data_dir)


def test_two_copies_of_a_benchmark_are_refused_not_pooled_as_seeds(data_dir, tmp_path, monkeypatch, capsys):
    """Two STS.en-de.txt under one folder used to be two tasks of one name that the summary pooled as if they were
    two seeds (n=2 for one seed); two Tatoeba copies, one silently replacing the other. ``--data`` given twice
    pooled the same way."""
    import shutil

    from interlingua.workflows.cli import main

    for benchmark, sub, name in (("sts17", "sts", "STS.en-de.txt"), ("tatoeba", "tat", "tatoeba.deu-eng.deu")):
        shutil.copytree(data_dir / sub, data_dir / sub / "copy")
        with pytest.raises(ValueError, match=rf"two files for .* under .*: ({name} and copy/{name}|copy/{name} and {name}) .*one copy"):
            discover_official_tasks(benchmark, data_dir / sub)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "letters_encoder.py").write_text(ENCODER_MODULE)
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("INTERLINGUA_LOG_FILE", "")
    args = ["eval", "--model", "py:letters_encoder:make", "--pack", str(tmp_path / "none"), "--seeds", "1",
            "--data", f"qam={data_dir / 'qam'}", "--data", f"qam={data_dir / 'qam'}", "--out", str(tmp_path / "o")]
    assert main(args) == 2
    assert "qam de,fr is given twice" in capsys.readouterr().err
    for spec, message in (("py:letters_encoder:nothing", "has no 'nothing'"),
                          ("py:no_such_module_here:make", "cannot be imported")):
        assert main([*args[:2], spec, *args[3:9], "--out", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err
        assert message in err and "hint" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def _eval(tmp_path, monkeypatch, module: str, source: str, *arguments: str) -> dict:
    """``interlingua eval --model py:MODULE:make --pack <none> --no-cache ARGUMENTS`` with ``source`` as MODULE;
    the results.json it wrote (parsed strictly: no NaN)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    parser = argparse.ArgumentParser()
    eval_command.add_arguments(parser)
    out = tmp_path / "out"
    args = parser.parse_args(["--model", f"py:{module}:make", "--pack", str(tmp_path / "no-pack"), "--out", str(out),
                              "--no-cache", *arguments])
    assert eval_command.run(args) == 0

    def refuse(constant):
        raise AssertionError(f"{constant} in results.json")

    return json.loads((out / "results.json").read_text(), parse_constant=refuse)


def test_eval_cli_with_official_data(data_dir, tmp_path, monkeypatch):
    document = _eval(tmp_path, monkeypatch, "letters_encoder", ENCODER_MODULE, "--seeds", "1",
                     "--data", f"sts17={data_dir / 'sts'}", "--data", f"tatoeba={data_dir / 'tat'}",
                     "--data", f"qam={data_dir / 'qam'}")
    values = {(m["task"], m["metric"]): m["value"] for m in document["measurements"]}
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


CONSTANT_ENCODER_MODULE = r'''
import numpy as np

class Constant:
    name = "constant"
    def encode(self, texts):
        return np.ones((len(texts), 4))

def make():
    return Constant()
'''


def test_a_score_that_cannot_be_computed_is_null_in_the_json_and_na_in_the_table(data_dir, tmp_path, monkeypatch,
                                                                                  capsys):
    """Every vector equal: no STS correlation exists (NaN); results.json wrote a bare NaN, which is not JSON."""
    document = _eval(tmp_path, monkeypatch, "constant_encoder", CONSTANT_ENCODER_MODULE, "--seeds", "1,2",
                     "--data", f"sts17={data_dir / 'sts'}")
    assert {m["value"] for m in document["measurements"] if m["metric"] in ("spearman", "pearson")} == {None}
    [spearman] = [s for s in document["summary"] if s["metric"] == "spearman"]
    assert (spearman["mean"], spearman["std"], spearman["n"], spearman["formatted"]) == (None, None, 2, "n/a")
    [row] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("sts17")]
    assert row.split()[-1] == "n/a"


def test_data_folders_may_be_fsspec_urls(data_dir, tmp_path, monkeypatch):
    """``--data`` took local folders only ("not a directory" for ``file://``): discovery walks any fsspec folder."""
    import uuid

    import fsspec

    memory = f"memory://official-{uuid.uuid4().hex}"
    fs = fsspec.filesystem("memory")
    for path in (data_dir / "tat").rglob("*"):
        fs.pipe_file(f"{memory}/tat/{path.relative_to(data_dir / 'tat').as_posix()}", path.read_bytes())
    local = _eval(tmp_path / "local", monkeypatch, "letters_encoder", ENCODER_MODULE, "--seeds", "1",
                  "--data", f"sts17={data_dir / 'sts'}", "--data", f"tatoeba={data_dir / 'tat'}")
    remote = _eval(tmp_path / "remote", monkeypatch, "letters_encoder", ENCODER_MODULE, "--seeds", "1",
                   "--data", f"sts17={(data_dir / 'sts').as_uri()}", "--data", f"tatoeba={memory}/tat/")
    assert remote["measurements"] == local["measurements"]
    assert {(m["task"], m["language"]) for m in remote["measurements"]} == {("sts17", "en-de"), ("tatoeba", "deu-eng")}
    with pytest.raises(ValueError, match=f"--data tatoeba={memory}/nothing: not a directory"):
        discover_official_tasks("tatoeba", f"{memory}/nothing")


class _Letters:
    name = "letters"

    def encode(self, texts):
        return _letters(texts)


def test_sts17_official_semeval_layout_is_discovered(tmp_path):
    (tmp_path / "STS2017.eval.v1.1").mkdir()
    (tmp_path / "STS2017.gs").mkdir()
    rows = [("abc", "abd", "4.2"), ("aaa", "jjj", ""), ("bed", "bead", "3"), ("fig", "gig", "2.5"), ("cab", "bac", "5")]
    for track, pair in (("4a", "es-en"), ("4b", "es-en")):
        (tmp_path / "STS2017.eval.v1.1" / f"STS.input.track{track}.{pair}.txt").write_text("".join(f"{a}\t{b}\n" for a, b, _ in rows))
        (tmp_path / "STS2017.gs" / f"STS.gs.track{track}.{pair}.txt").write_text("".join(f"{g}\n" for *_, g in rows))
    tasks = discover_official_tasks("sts17", tmp_path)
    assert [(t.name, t.language) for t in tasks] == [("sts17", "es-en.track4a"), ("sts17", "es-en.track4b")]
    scored = [r for r in rows if r[2]]  # the unscored pair is left out, as by the SemEval scorer
    expected = sts_correlations(_letters([a for a, *_ in scored]), _letters([b for _, b, _ in scored]), [float(g) for *_, g in scored])
    assert tasks[0].run(_Letters(), 0) == pytest.approx(expected)
    (tmp_path / "STS2017.eval.v1.1" / "STS.input.track5.en-en.txt").write_text("a\tb\n")
    with pytest.raises(ValueError, match="no gold file"):
        discover_official_tasks("sts17", tmp_path)


def test_malformed_official_files_raise_instead_of_being_scored(tmp_path):
    (tmp_path / "STS.en-de.txt").write_text("abc\tabd\t4\nabc abd 3\nbed\tbead\t2\n")
    [task] = discover_official_tasks("sts17", tmp_path)
    with pytest.raises(ValueError, match=r"1 malformed row.*STS.en-de.txt:2"):
        task.run(_Letters(), 0)
    bucc = tmp_path / "bucc" / "de-en"
    bucc.mkdir(parents=True)
    for split in ("sample", "training"):
        (bucc / f"de-en.{split}.de").write_text("de-1\tabc\nde-2\tdef\n")
        (bucc / f"de-en.{split}.en").write_text("en-1\tabc\nen-2\tdef\n")
        (bucc / f"de-en.{split}.gold").write_text("de-1\ten-1\nde-9\ten-2\n")
    [task] = discover_official_tasks("bucc", tmp_path / "bucc")
    with pytest.raises(ValueError, match=r"BUCC de-en sample.*de-en.sample.gold:2: gold pair"):
        task.run(_Letters(), 0)
    fr = tmp_path / "bucc" / "fr-en"  # a language with its sample split only was left out without a word
    fr.mkdir()
    for side in ("fr", "en", "gold"):
        (fr / f"fr-en.sample.{side}").write_text("")
    with pytest.raises(ValueError, match=r"fr-en has a sample split but no training split"):
        discover_official_tasks("bucc", tmp_path / "bucc")


#: Well-formed files of two benchmarks: a malformed one given after either is refused before any encoder loads.
_GOOD_FILES = {"qam": {"QAM.train": "aa\taa\t1\naa\tjj\t0\n", "QAM.dev.en": "aa\taa\t1\n", "QAM.dev.de": "dd\tdd\t1\n",
                       "QAM.test.de": "dd\tdd\t1\n"},
               "tatoeba": {"tatoeba.deu-eng.deu": "aa\nbb\n", "tatoeba.deu-eng.eng": "aa\nbb\n"}}
_XNLI_HEADER = "language\tgold_label\tsentence1\tsentence2\n"


@pytest.mark.parametrize("benchmark, files, message", [
    ("tatoeba", {"tatoeba.deu-eng.deu": "aa\nbb\ncc\n", "tatoeba.deu-eng.eng": "aa\nbb\n"}, "3 deu lines vs 2 eng lines"),
    ("sts17", {"STS.en-de.txt": "abc\tabd\t4\nabc abd 3\n"}, r"1 malformed row.*STS.en-de.txt:2"),
    ("qam", {"QAM.train": "aa\taa\t1\n", "QAM.dev.en": "aa\taa\t1\n", "QAM.test.de": "dd\tdd\t1\n"},
     r"qam dev de: file not found: \S*QAM\.dev\.de \(expected: QAM\.train with QAM\.dev\.\{lang\} and QAM\.test\.\{lang\}\)"),
    ("mldoc", {"english.train.1000": "CCAT\ta\n", "english.dev": "CCAT\ta\n", "german.dev": "ECAT\tb\n",
               "german.test": "XXAT\tb\n"}, r"mldoc test german \(\S*german\.test\): no usable row, e\.g\. \S*german\.test:1: "
                                            "expected '<one of"),
    ("xnli", {"multinli.train.en.tsv": "premise\thypo\tlabel\na\tb\tneutral\n",
              "xnli.dev.tsv": _XNLI_HEADER + "en\tneutral\ta\tb\n", "xnli.test.tsv": _XNLI_HEADER + "fr\tneutral\ta\tb\n"},
     r"xnli dev fr \(\S*xnli\.dev\.tsv\): no usable row$"),
    ("pawsx", {"en/train.tsv": "id\ts1\ts2\tlabel\n1\ta\tb\t1\n", "en/dev_2k.tsv": "", "de/dev_2k.tsv": "",
               "de/test_2k.tsv": ""},
     r"pawsx train \(\S*en/train\.tsv\): no usable row, e\.g\. \S*train\.tsv:2: label '1' not 0/1 or empty sentence"),
    ("marc", {"dataset_en_train.json": "{not json\n", "dataset_en_dev.json": "", "dataset_de_dev.json": "",
              "dataset_de_test.json": ""}, r"marc train \(\S*dataset_en_train\.json\): no usable row, e\.g\. \S*:1: "
                                         "unreadable review"),
])
def test_a_malformed_file_is_refused_before_any_encoder_loads(tmp_path, monkeypatch, capsys, benchmark, files, message):
    """The files were parsed only in the task's run, after every --model was loaded, and with several models after
    whole tasks ran for the first: each selected task's check now reads them before the encoders resolve. Transfer
    benchmarks had no check: a missing dev file, or one without a usable row, failed after the models loaded."""
    from interlingua.models import resolve
    from interlingua.workflows.cli import main

    good_name = next(name for name in _GOOD_FILES if name != benchmark)
    good, bad = tmp_path / "good", tmp_path / "bad"
    for folder, contents in ((good, _GOOD_FILES[good_name]), (bad, files)):
        for name, text in contents.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
    monkeypatch.setattr(resolve, "resolve_encoder", lambda spec, wrap_leaf=None: pytest.fail(f"{spec} resolved"))
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("INTERLINGUA_LOG_FILE", "")
    assert main(["eval", "--model", "use,minilm", "--pack", str(tmp_path / "none"), "--seeds", "1", "--no-cache",
                 "--data", f"{good_name}={good}", "--data", f"{benchmark}={bad}", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert re.search(message, err) and "Traceback" not in err and len(err.splitlines()) == 1


def test_a_task_reads_its_files_once_for_its_check_and_its_seeds(data_dir, tmp_path, monkeypatch):
    """The check read every file before the models loaded and each run read them again (BUCC's training split, or a
    remote --data, once more per seed): the check's read now serves the runs of its task that follow it."""
    from interlingua.evaluation.tasks import official_suite

    reads = []
    real = official_suite.load_qam
    monkeypatch.setattr(official_suite, "load_qam", lambda url: reads.append(url) or real(url))
    document = _eval(tmp_path, monkeypatch, "letters_encoder", ENCODER_MODULE, "--seeds", "1,2",
                     "--data", f"qam={data_dir / 'qam'}")
    assert sorted(reads) == sorted(str(data_dir / "qam" / name) for name in
                                   ("QAM.train", "QAM.dev.en", "QAM.dev.de", "QAM.dev.fr", "QAM.test.de", "QAM.test.fr"))
    assert {m["seed"] for m in document["measurements"] if m["task"] == "qam"} == {1, 2}


def test_wmt20qe_prefers_scored_test20_then_dev(tmp_path):
    header = "index\toriginal\ttranslation\tscores\tmean\tz_scores\tz_mean\tmodel_scores\n"
    rows = [("abc", "abd", 0.9), ("aaa", "jjj", -1.0), ("bed", "bead", 0.3), ("fig", "gig", 0.1)]
    body = "".join(f"{i}\t{a}\t{b}\t[1]\t1\t[1]\t{z}\t0\n" for i, (a, b, z) in enumerate(rows))
    (tmp_path / "et-en").mkdir()
    (tmp_path / "et-en" / "dev.eten.df.short.tsv").write_text(header + body)
    (tmp_path / "et-en" / "test20.eten.df.short.tsv").write_text("index\toriginal\ttranslation\n0\tabc\tabd\n")  # blind
    [task] = discover_official_tasks("wmt20qe", tmp_path)
    from scipy.stats import pearsonr

    from interlingua.evaluation.metrics.similarity import paired_cosine
    cos = paired_cosine(_letters([a for a, *_ in rows]), _letters([b for _, b, _ in rows]))
    assert task.language == "et-en" and task.run(_Letters(), 0)["pearson"] == pytest.approx(100 * pearsonr(cos, [z for *_, z in rows])[0])
    (tmp_path / "et-en" / "test20.eten.df.short.tsv").write_text(header + body.replace("\t0.3\t", "\t-0.3\t"))
    [task] = discover_official_tasks("wmt20qe", tmp_path)
    expected = 100 * pearsonr(cos, [0.9, -1.0, -0.3, 0.1])[0]
    assert task.run(_Letters(), 0)["pearson"] == pytest.approx(expected)


def test_transfer_selects_c_on_the_union_of_dev_sets(data_dir, monkeypatch):
    from interlingua.evaluation.tasks import official

    seen = {}
    real = official.transfer_task

    def spy(train, dev, test, encoder, seed=0):
        seen["dev"], seen["test"] = sorted(dev), sorted(test)
        return real(train, dev, test, encoder, seed)

    monkeypatch.setattr(official, "transfer_task", spy)
    [task] = discover_official_tasks("qam", data_dir / "qam")
    result = task.run(_Letters(), 0)
    assert seen == {"dev": ["de", "en", "fr"], "test": ["de", "fr"]}
    assert result["accuracy"] == pytest.approx((result["de"] + result["fr"]) / 2)


def test_transfer_benchmarks_are_found_in_their_archives_layouts(tmp_path):
    """XNLI's two archives unpack into XNLI-1.0/ and XNLI-MT-1.0/multinli/, MARC's into json/{train,dev,test}/, PAWS-X's
    into x-final/<lang>/: --data pointed at the folder holding them found nothing ("no xnli files")."""
    header = "language\tgold_label\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1\tsentence2\tpairID\n"
    xnli = tmp_path / "xnli"
    (xnli / "XNLI-1.0").mkdir(parents=True)
    (xnli / "XNLI-MT-1.0" / "multinli").mkdir(parents=True)
    for split in ("dev", "test"):
        (xnli / "XNLI-1.0" / f"xnli.{split}.tsv").write_text(header + "fr\tneutral\t-\t-\ta\tb\t1\nde\tneutral\t-\t-\ta\tb\t2\n")
    (xnli / "XNLI-MT-1.0" / "multinli" / "multinli.train.en.tsv").write_text("premise\thypo\tlabel\na\tb\tneutral\n")
    marc = tmp_path / "marc"
    for split in ("train", "dev", "test"):
        (marc / "json" / split).mkdir(parents=True)
        for lang in ("en", "de", "ja"):
            (marc / "json" / split / f"dataset_{lang}_{split}.json").write_text("")
    paws = tmp_path / "paws"
    for lang in ("en", "de", "fr"):
        (paws / "x-final" / lang).mkdir(parents=True)
        for name in ("train.tsv", "dev_2k.tsv", "test_2k.tsv"):
            (paws / "x-final" / lang / name).write_text("")
    found = {name: [(t.name, t.language) for t in discover_official_tasks(name, folder)]
             for name, folder in (("xnli", xnli), ("marc", marc), ("pawsx", paws))}
    assert found == {"xnli": [("xnli", "de,fr")], "marc": [("marc", "de,en,ja")], "pawsx": [("pawsx", "de,en,fr")]}
    import shutil

    shutil.copytree(xnli / "XNLI-1.0", xnli / "again" / "XNLI-1.0")
    with pytest.raises(ValueError, match=r"two files for xnli\.dev\.tsv under .*: .*XNLI-1\.0/xnli\.dev\.tsv and "):
        discover_official_tasks("xnli", xnli)
    shutil.copytree(paws / "x-final", paws / "copy")
    with pytest.raises(ValueError, match="two copies of PAWS-X under"):
        discover_official_tasks("pawsx", paws)
    (marc / "json" / "dev" / "dataset_ja_dev.json").unlink()
    with pytest.raises(ValueError, match=r"has test files but no dataset_ja_dev\.json"):
        discover_official_tasks("marc", marc)


def test_rows_a_transfer_loader_rejects_are_counted_and_named(data_dir, capsys):
    """A test row with a label outside 0/1 was left out of the accuracy without a word."""
    with open(data_dir / "qam" / "QAM.test.de", "a") as handle:
        handle.write("dd\tdd\tmaybe\n")

    class Letters:
        name = "letters"

        def encode(self, texts):
            return _letters(texts)

    (task,) = discover_official_tasks("qam", data_dir / "qam")
    result = task.run(Letters(), 1)
    assert (result["rejected_train"], result["rejected_dev"], result["rejected_test"]) == (0.0, 0.0, 1.0)
    err = capsys.readouterr().err
    assert "[eval] qam: 1 test row(s) rejected, not scored (first: " in err and "QAM.test.de:3: expected" in err


def test_the_rejected_rows_line_masks_a_credential_in_the_url(capsys):
    import fsspec

    fs = fsspec.filesystem("memory")
    base = "memory://user:s3cr3t@host/qam"
    for name, text in (("QAM.train", "aa\taa\t1\naa\tjj\t0\nbb\tbb\t1\nbb\tff\t0\n"), ("QAM.dev.en", "aa\taa\t1\nbb\tff\t0\n"),
                       ("QAM.dev.de", "cc\tcc\t1\ncc\thh\t0\n"), ("QAM.test.de", "dd\tdd\t1\ndd\tee\t0\ndd\tdd\tmaybe\n")):
        with fs.open(f"{base}/{name}", "w") as handle:
            handle.write(text)

    class Letters:
        name = "letters"

        def encode(self, texts):
            return _letters(texts)

    (task,) = discover_official_tasks("qam", base)
    assert task.run(Letters(), 1)["rejected_test"] == 1.0
    err = capsys.readouterr().err
    assert "1 test row(s) rejected" in err and "s3cr3t" not in err


@pytest.mark.parametrize("benchmark", OFFICIAL_BENCHMARKS)
def test_a_folder_without_the_benchmarks_files_names_the_file_names_expected(tmp_path, benchmark):
    with pytest.raises(ValueError) as error:
        discover_official_tasks(benchmark, tmp_path)
    assert str(error.value).endswith(f"(expected: {EXPECTED_FILES[benchmark]})")
    assert "\n" not in str(error.value) and "--help" not in str(error.value)
