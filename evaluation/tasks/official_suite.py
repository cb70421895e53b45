"""Discover official benchmark files in a directory (their distributed names) and turn them into tasks.

``--data NAME=DIR`` with NAME one of ``OFFICIAL_BENCHMARKS``:
  sts17     ``STS.{l1}-{l2}.txt`` (STS2017 extended) and/or the official ``STS.input.track{t}.{l1}-{l2}.txt``
            with ``STS.gs.track{t}.{l1}-{l2}.txt`` anywhere under DIR (language ``{l1}-{l2}.track{t}``)
                                                                        -> spearman (primary), pearson
  tatoeba   ``tatoeba.{lang}-eng.{lang}`` / ``.eng``                    -> accuracy (average of directions)
  bucc      ``{src}-en.sample.*`` and ``{src}-en.training.*``          -> F1 on training, threshold from sample
  mewsc16   ``{lang}_sentences.txt`` / ``{lang}_categories.txt``       -> clustering accuracy
  wmt20qe   ``**/{split}.{src}{tgt}.df.short.tsv``, split test20 > test > dev > train, the first whose
            header has ``z_mean``                                       -> pearson
  mldoc     ``english.train.{n}`` + ``{language}.dev`` / ``.test``      -> accuracy per language
  xnli      ``multinli.train.en.tsv`` + ``xnli.dev.tsv`` / ``xnli.test.tsv``, each at any depth (the archives unpack
            into ``XNLI-MT-1.0/multinli/`` and ``XNLI-1.0/``)
  pawsx     ``en/train.tsv`` + ``{lang}/dev_2k.tsv`` / ``test_2k.tsv``, at the top or below one folder (``x-final/``)
  marc      ``dataset_en_train.json`` + ``dataset_{lang}_{dev,test}.json``, each at any depth (``json/{split}/``)
  qam       ``QAM.train`` + ``QAM.dev.{lang}`` / ``QAM.test.{lang}``
Transfer benchmarks give one task whose metrics are the per-language test accuracies (primary: their mean);
C is chosen on the union of the dev sets of every language (English's included), as the issue's protocol states.
Rows a transfer loader rejects are counted in the task's result (``rejected_{train,dev,test}``) and named on stderr.
STS, BUCC, WMT20 QE and MewsC-16 files with malformed rows, unaligned Tatoeba files, and transfer files that are
missing or hold no usable row raise ValueError (naming the file and rows) instead of being scored on the rows that
parsed: in the task's ``check``, before any encoder loads."""

from __future__ import annotations

import posixpath
import re
import sys
from functools import partial
from pathlib import Path

import numpy as np

from interlingua.evaluation.data.bucc import load_bucc
from interlingua.evaluation.data.files import read_tsv_header
from interlingua.evaluation.data.folder import DataFolder
from interlingua.evaluation.data.marc import load_marc
from interlingua.evaluation.data.mewsc16 import load_mewsc16
from interlingua.evaluation.data.mldoc import load_mldoc
from interlingua.evaluation.data.pawsx import load_pawsx
from interlingua.evaluation.data.qam import load_qam
from interlingua.evaluation.data.records import require_clean
from interlingua.evaluation.data.sts2017 import load_sts2017_extended, load_sts2017_official
from interlingua.evaluation.data.tatoeba import load_tatoeba
from interlingua.evaluation.data.wmt20_qe import load_wmt20_qe
from interlingua.evaluation.data.xnli import load_xnli, load_xnli_mt_train
from interlingua.evaluation.tasks import official
from interlingua.evaluation.tasks.spec import TaskSpec

#: The file names each benchmark's discovery looks for (the table above, shortened), named when none is found.
EXPECTED_FILES = {
    "sts17": "STS.{l1}-{l2}.txt, or STS.input.track{t}.{l1}-{l2}.txt with STS.gs.track{t}.{l1}-{l2}.txt",
    "tatoeba": "tatoeba.{lang}-eng.{lang} with tatoeba.{lang}-eng.eng",
    "bucc": "{src}-en.sample.gold and {src}-en.training.gold with their .{src}/.en sentence files",
    "mewsc16": "{lang}_sentences.txt with {lang}_categories.txt",
    "wmt20qe": "{split}.{src}{tgt}.df.short.tsv (split test20, test, dev or train)",
    "mldoc": "english.train.{n} with {language}.dev and {language}.test",
    "xnli": "multinli.train.en.tsv with xnli.dev.tsv and xnli.test.tsv",
    "pawsx": "en/train.tsv with {lang}/dev_2k.tsv and {lang}/test_2k.tsv",
    "marc": "dataset_en_train.json with dataset_{lang}_dev.json and dataset_{lang}_test.json",
    "qam": "QAM.train with QAM.dev.{lang} and QAM.test.{lang}",
}
OFFICIAL_BENCHMARKS = tuple(EXPECTED_FILES)


def _names(directory: DataFolder, pattern: str) -> list[re.Match]:
    regex = re.compile(pattern)
    return sorted((m for m in (regex.fullmatch(relative) for relative in directory.files) if m), key=lambda m: m.string)


def _one_per_label(root: DataFolder, pattern: str, group: int = 1) -> dict[str, re.Match]:
    """The files matching ``pattern`` under ``root`` by their language label (the regex ``group``); two files with
    the same label (two copies of a benchmark in one folder tree) are a ValueError naming both, instead of two
    tasks of one name pooled as if they were seeds, or one silently taking the other's place."""
    found: dict[str, re.Match] = {}
    for match in _names(root, pattern):
        label = match[group]
        if label in found:
            raise ValueError(f"two files for {label} under {root}: {found[label].string} and {match.string} "
                             "(hint: point --data at a folder that holds one copy of the benchmark)")
        found[label] = match
    return found


def _transfer_part(name, what, url, read):
    """``read(url)``: one transfer file's rows (or one language's rows of it) when it holds a row to train or score on;
    otherwise ValueError naming the task's ``what`` (split, language), the file, and what was expected there."""
    try:
        data = read(url)
    except ValueError as err:  # the file is missing or not UTF-8
        raise ValueError(f"{name} {what}: {err} (expected: {EXPECTED_FILES[name]})") from None
    if not data.labels:
        example = f", e.g. {data.rejected[0][0]}: {data.rejected[0][1]}" if data.rejected else ""
        raise ValueError(f"{name} {what} ({url}): no usable row{example}")
    return data


def _transfer_task(name, languages, source, train_url, load_train, split_url, load_split=None) -> TaskSpec:
    """The transfer task ``name``: English ``train_url`` read by ``load_train(url)``, each language's dev and test file
    ``split_url(split, language)`` read by ``load_split(url, language)`` (default: ``load_train(url)``). Its check reads
    every file the run scores, so a missing one, or one without a usable row, is refused before any encoder loads."""
    load_split = load_split or (lambda url, language: load_train(url))

    def load():
        def split_part(split, language):
            return _transfer_part(name, f"{split} {language}", split_url(split, language),
                                  lambda url: load_split(url, language))
        dev_languages = list(dict.fromkeys([source, *languages]))
        return (_transfer_part(name, "train", train_url, load_train),
                {l: split_part("dev", l) for l in dev_languages}, {l: split_part("test", l) for l in languages})
    return _checked_task(name, "transfer", ",".join(languages), "accuracy", load,
                         partial(_transfer_scores, languages=languages, name=name))


def _transfer_scores(parts, encoder, seed, languages, name):
    """Trained on the source language (English) only; C chosen on the union of the dev sets of the source and
    ``languages``. Rows a loader rejected (a label outside the task's, an empty text) are counted in the result
    (``rejected_train`` / ``_dev`` / ``_test``) and named on stderr, not dropped unseen: a test row left out changes
    the accuracy's denominator."""
    train, dev, test = parts
    result = official.transfer_task(train, dev, test, encoder, seed)
    result["accuracy"] = float(np.mean([result[l] for l in languages]))
    for split, pieces in (("train", [train]), ("dev", list(dev.values())), ("test", list(test.values()))):
        rejected = [row for piece in pieces for row in piece.rejected]
        result[f"rejected_{split}"] = float(len(rejected))
        if rejected:
            where, why = rejected[0]
            from interlingua.core.redact import redact_text

            print(redact_text(f"[eval] {name}: {len(rejected)} {split} row(s) rejected, not scored (first: {where}: {why})"),
                  file=sys.stderr)
    return result


def discover_official_tasks(benchmark: str, directory: str | Path) -> list[TaskSpec]:
    """Tasks for the files of ``benchmark`` found under ``directory`` (a local folder or an fsspec URL); ValueError
    when none is found."""
    if benchmark not in OFFICIAL_BENCHMARKS:
        raise ValueError(f"benchmark must be one of {OFFICIAL_BENCHMARKS}; got {benchmark!r}")
    root = DataFolder(directory)
    if not root.is_dir():
        raise ValueError(f"--data {benchmark}={directory}: not a directory")
    tasks = _DISCOVER[benchmark](root)
    if not tasks:
        raise ValueError(f"no {benchmark} files found under {root} (expected: {EXPECTED_FILES[benchmark]})")
    return tasks


class _TaskData:
    """One task's files as its ``load()`` read them, from the first of its check and runs until the runner releases
    them (:func:`~interlingua.evaluation.runner.check_task_files` after the check of every task but the first,
    :func:`~interlingua.evaluation.runner.evaluate_models` once every model and seed ran the task): every seed and
    model share one read, and nothing stays once the task is done."""

    _UNREAD = object()

    def __init__(self, load):
        self._load = load
        self._data = self._UNREAD

    def read(self):
        if self._data is self._UNREAD:
            self._data = self._load()
        return self._data

    def release(self) -> None:
        self._data = self._UNREAD


def _checked_task(name, kind, language, primary, load, score) -> TaskSpec:
    """A task whose files ``load()`` parses and validates (ValueError naming a malformed row): as the task's check,
    before any encoder loads, and in its runs, which score ``score(data, encoder, seed)`` on that one read
    (:class:`_TaskData`, released once the run is done with the task)."""
    data = _TaskData(load)
    return TaskSpec(name, kind, language, primary, lambda enc, seed: score(data.read(), enc, seed),
                    check=data.read, release=data.release)


def _sts_scores(data, enc, seed):
    return official.sts_task(data, enc)


def _sts17(root):
    tasks = [_checked_task("sts17", "sts", m[1], "spearman",
                           lambda p=root.url(m.string): require_clean(load_sts2017_extended(p), p), _sts_scores)
             for m in _one_per_label(root, r"(?:.*/)?STS\.([a-z]{2}-[a-z]{2})\.txt").values()]
    gold = {label: root.url(m.string)
            for label, m in _one_per_label(root, r"(?:.*/)?STS\.gs\.(track\w+\.[a-z]{2}-[a-z]{2})\.txt").items()}
    for m in _one_per_label(root, r"(?:.*/)?STS\.input\.(track(\w+)\.([a-z]{2}-[a-z]{2}))\.txt").values():
        if m[1] not in gold:
            raise ValueError(f"{root.url(m.string)} has no gold file STS.gs.{m[1]}.txt under {root}")
        def load(inp=root.url(m.string), gs=gold[m[1]]):
            return require_clean(load_sts2017_official(inp, gs), f"{inp} + {gs}")
        tasks.append(_checked_task("sts17", "sts", f"{m[3]}.track{m[2]}", "spearman", load, _sts_scores))
    return tasks


def _tatoeba_scores(data, enc, seed):
    scores = official.tatoeba_task(data, enc)
    return {"accuracy": scores["average"], "accuracy_xx2en": scores["src2tgt"], "accuracy_en2xx": scores["tgt2src"],
            "alignment": scores["alignment"], "uniformity": scores["uniformity"]}


def _tatoeba(root):
    found = {lang: m.string for lang, m in _one_per_label(root, r"(?:.*/)?tatoeba\.([a-z]+)-eng\.\1").items()}
    return [_checked_task("tatoeba", "retrieval", f"{lang}-eng", "accuracy", partial(load_tatoeba, root.parent(path), lang),
                          _tatoeba_scores) for lang, path in found.items()]


def _bucc_splits(root, lang, folder):
    """The sample and training splits of BUCC ``lang``-en in ``folder`` (relative to ``root``), each clean."""
    folder = root.url(folder)
    return tuple(require_clean(load_bucc(folder, lang, split), f"BUCC {lang}-en {split} in {folder}")
                 for split in ("sample", "training"))


def _bucc_scores(splits, enc, seed):
    result = official.bucc_task(*splits, enc)
    return {k: result[k] for k in ("f1", "precision", "recall", "threshold")}


def _bucc(root):
    found = {lang: posixpath.dirname(m.string)
             for lang, m in _one_per_label(root, r"(?:.*/)?([a-z]{2})-en\.sample\.gold").items()}
    untested = [lang for lang, folder in found.items() if not root.exists(posixpath.join(folder, f"{lang}-en.training.gold"))]
    if untested:  # the threshold is tuned on sample and F1 measured on training: without it there is no score
        raise ValueError(f"bucc under {root}: {', '.join(f'{l}-en' for l in untested)} has a sample split but no "
                         "training split (its .gold, .{src} and .en files): add them, or point --data at the languages "
                         "that have both")
    return [_checked_task("bucc", "mining", f"{lang}-en", "f1", partial(_bucc_splits, root, lang, folder), _bucc_scores)
            for lang, folder in found.items()]


def _mewsc16(root):
    return [_checked_task("mewsc16", "clustering", m[2], "accuracy",
                          lambda d=root.parent(m.string), lang=m[2]:
                          require_clean(load_mewsc16(d, lang), f"MewsC-16 {lang} in {d}"),
                          lambda data, enc, seed: official.clustering_task(data, enc, seed))
            for m in _one_per_label(root, r"((?:.*/)?)([a-z]{2})_sentences\.txt", group=2).values()]


_QE_SPLIT_PREFERENCE = ("test20", "test", "dev", "train")


def _wmt20qe(root):
    files = {}
    for m in _names(root, r"(?:.*/)?(train|dev|test|test20)\.([a-z]{2})([a-z]{2})\.df\.short\.tsv"):
        if "z_mean" not in read_tsv_header(root.url(m.string)):
            continue  # e.g. a blind test file released without scores
        pair = f"{m[2]}-{m[3]}"
        if pair not in files or _QE_SPLIT_PREFERENCE.index(m[1]) < _QE_SPLIT_PREFERENCE.index(files[pair][0]):
            files[pair] = (m[1], m.string)
    return [_checked_task("wmt20qe", "qe", pair, "pearson", lambda p=root.url(path): require_clean(load_wmt20_qe(p), p),
                          lambda data, enc, seed: official.qe_task(data, enc))
            for pair, (_, path) in files.items()]


def _mldoc(root):
    train = _names(root, r"english\.train\.\d+")
    langs = sorted({m[1] for m in _names(root, r"([a-z]+)\.test")})
    if not train or not langs:
        return []
    return [_transfer_task("mldoc", langs, "english", root.url(train[0].string), load_mldoc,
                           lambda split, l: root.url(f"{l}.{split}"))]


def _xnli(root):
    names = ("multinli.train.en.tsv", "xnli.dev.tsv", "xnli.test.tsv")
    # each at any depth: the archives unpack into XNLI-1.0/ and XNLI-MT-1.0/multinli/
    located = [(m.string if (m := _one_per_label(root, rf"(?:.*/)?({re.escape(name)})").get(name)) else None)
               for name in names]
    if not all(located):
        return []
    from interlingua.evaluation.data.files import read_tsv_dicts

    train, dev, test = (root.url(relative) for relative in located)
    langs = sorted({row.get("language") for _, row in read_tsv_dicts(test) if row.get("language")})
    return [_transfer_task("xnli", langs, "en", train, load_xnli_mt_train, lambda split, l: {"dev": dev, "test": test}[split],
                           load_xnli)]


def _pawsx(root):
    # the language folders, at the top or below the archive's x-final/
    matches = _names(root, r"(.*/)?([a-z]{2})/test_2k\.tsv")
    bases = sorted({m[1] or "" for m in matches})
    if len(bases) > 1:
        raise ValueError(f"two copies of PAWS-X under {root}: in {' and '.join(b or './' for b in bases)} "
                         "(hint: point --data at a folder that holds one copy of the benchmark)")
    base = bases[0] if bases else ""
    langs = sorted({m[2] for m in matches})
    if not root.exists(f"{base}en/train.tsv") or not langs:
        return []
    return [_transfer_task("pawsx", langs, "en", root.url(f"{base}en/train.tsv"), load_pawsx,
                           lambda split, l: root.url(f"{base}{l}/{split}_2k.tsv"))]


def _marc(root):
    # each at any depth: the release unpacks into json/{train,dev,test}/
    tests, devs, trains = ({label: m.string for label, m in
                            _one_per_label(root, rf"(?:.*/)?dataset_([a-z]{{2}})_{split}\.json").items()}
                           for split in ("test", "dev", "train"))
    langs = sorted(tests)
    if "en" not in trains or not langs:
        return []
    missing = [f"dataset_{l}_dev.json" for l in ["en", *langs] if l not in devs]
    if missing:
        raise ValueError(f"marc under {root} has test files but no {', '.join(missing)} (the dev sets choose C)")
    return [_transfer_task("marc", langs, "en", root.url(trains["en"]), load_marc,
                           lambda split, l: root.url({"dev": devs, "test": tests}[split][l]))]


def _qam(root):
    langs = sorted({m[1] for m in _names(root, r"QAM\.test\.([a-z]{2})")})
    if not root.exists("QAM.train") or not langs:
        return []
    return [_transfer_task("qam", langs, "en", root.url("QAM.train"), load_qam,
                           lambda split, l: root.url(f"QAM.{split}.{l}"))]


_DISCOVER = {"sts17": _sts17, "tatoeba": _tatoeba, "bucc": _bucc, "mewsc16": _mewsc16, "wmt20qe": _wmt20qe,
             "mldoc": _mldoc, "xnli": _xnli, "pawsx": _pawsx, "marc": _marc, "qam": _qam}
