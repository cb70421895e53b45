"""Each official-format loader on small files written in that format."""

import json

import pytest

from interlingua.evaluation.data.bucc import load_bucc
from interlingua.evaluation.data.marc import load_marc
from interlingua.evaluation.data.mewsc16 import load_mewsc16
from interlingua.evaluation.data.mldoc import load_mldoc
from interlingua.evaluation.data.pawsx import load_pawsx
from interlingua.evaluation.data.qam import load_qam
from interlingua.evaluation.data.sts2017 import load_sts2017_extended, load_sts2017_official
from interlingua.evaluation.data.tatoeba import load_tatoeba
from interlingua.evaluation.data.wmt20_qe import load_wmt20_qe
from interlingua.evaluation.data.xnli import load_xnli, load_xnli_mt_train


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_sts2017_extended_and_bad_rows(tmp_path):
    url = _write(tmp_path / "STS.en-de.txt", "A man plays.\tEin Mann spielt.\t4.2\nbroken line\nA\tB\tx\n\nC\tD\tnan\n"
                                             "  Lead space.\tTrail space.\t3 \r\n")
    pairs = load_sts2017_extended(url)
    # lines are stripped before splitting, as sentence-transformers reads STS2017-extended
    assert (pairs.first, pairs.second, pairs.scores) == (["A man plays.", "Lead space."], ["Ein Mann spielt.", "Trail space."], [4.2, 3.0])
    assert [reason.split(" (")[0].split(",")[0] for _, reason in pairs.rejected] == [
        "expected 3 tab-separated fields", "score 'x' is not a finite number", "score 'nan' is not a finite number"]
    assert [where for where, _ in pairs.rejected] == [f"{url}:2", f"{url}:3", f"{url}:5"]
    assert pairs.skipped == [(f"{url}:4", "blank line")]


def test_sts2017_official_input_and_gold(tmp_path):
    inp = _write(tmp_path / "STS.input.track4a.es-en.txt", "Hola.\tHello.\nAdiós.\tBye.\nUno\tdos\ttres\nA.\tB.\n")
    gs = _write(tmp_path / "STS.gs.track4a.es-en.txt", "5.0\n\n2\nfive\n")
    pairs = load_sts2017_official(inp, gs)
    assert pairs.scores == [5.0] and pairs.first == ["Hola."]
    assert pairs.skipped == [(f"{gs}:2", "unscored pair (empty gold line)")]
    assert [where for where, _ in pairs.rejected] == [f"{inp}:3", f"{gs}:4"]
    with pytest.raises(ValueError, match="aligned"):
        load_sts2017_official(inp, _write(tmp_path / "short.txt", "1\n"))


def test_lines_split_only_on_newline(tmp_path):
    from interlingua.evaluation.data.files import read_lines, read_text

    # U+2028, U+0085, form feed and a bare CR are part of a sentence; CRLF ends a line; no BOM in the text
    text = "\ufeffa\u2028b\r\nc\x85d\x0ce\nf\rg\n"
    url = str(tmp_path / "lines.txt")
    (tmp_path / "lines.txt").write_bytes(text.encode("utf-8"))
    assert read_lines(url) == ["a\u2028b", "c\x85d\x0ce", "f\rg"]
    assert read_lines(_write(tmp_path / "no_final_newline.txt", "x\n\ny")) == ["x", "", "y"]
    assert read_lines(_write(tmp_path / "empty.txt", "")) == []
    with pytest.raises(ValueError, match="file not found"):
        read_text(str(tmp_path / "missing.txt"))
    (tmp_path / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match="not valid UTF-8"):
        read_text(str(tmp_path / "latin1.txt"))


def test_tatoeba_stays_aligned_with_unicode_line_separators(tmp_path):
    _write(tmp_path / "tatoeba.fra-eng.fra", "Un\u2028deux.\nTrois.\n")
    _write(tmp_path / "tatoeba.fra-eng.eng", "One two.\nThree.\n")
    data = load_tatoeba(str(tmp_path), "fra")
    assert data.source == ["Un\u2028deux.", "Trois."] and data.target == ["One two.", "Three."]


def test_tatoeba(tmp_path):
    _write(tmp_path / "tatoeba.fra-eng.fra", "Bonjour.\nMerci.\n")
    _write(tmp_path / "tatoeba.fra-eng.eng", "Hello.\nThanks.\n")
    data = load_tatoeba(str(tmp_path), "fra")
    assert data.source == ["Bonjour.", "Merci."] and data.target == ["Hello.", "Thanks."]
    _write(tmp_path / "tatoeba.deu-eng.deu", "Hallo.\n")
    _write(tmp_path / "tatoeba.deu-eng.eng", "Hello.\nMore.\n")
    with pytest.raises(ValueError, match="aligned"):
        load_tatoeba(str(tmp_path), "deu")


def test_bucc(tmp_path):
    _write(tmp_path / "de-en.sample.de", "de-000001\tHallo Welt.\nde-000002\tGuten Tag.\nde-000002\tDuplicate.\n")
    _write(tmp_path / "de-en.sample.en", "en-000001\tGood day.\nen-000002\tHello world.\n")
    _write(tmp_path / "de-en.sample.gold", "de-000001\ten-000002\nde-000002\ten-000001\nde-000009\ten-000001\n")
    split = load_bucc(str(tmp_path), "de", "sample")
    assert split.source_ids == ["de-000001", "de-000002"] and split.target_texts == ["Good day.", "Hello world."]
    assert split.gold == {("de-000001", "en-000002"), ("de-000002", "en-000001")}
    assert len(split.rejected) == 2  # duplicate id, gold with unknown id
    _write(tmp_path / "de-en.test.de", "de-1\tx\n")
    _write(tmp_path / "de-en.test.en", "en-1\ty\n")
    assert load_bucc(str(tmp_path), "de", "test", require_gold=False).gold == set()
    with pytest.raises(ValueError, match="gold file"):
        load_bucc(str(tmp_path), "de", "test")
    with pytest.raises(ValueError, match="split_name"):
        load_bucc(str(tmp_path), "de", "dev")


def test_mewsc16(tmp_path):
    _write(tmp_path / "ja_sentences.txt", "文一 \n  \n文三\n")
    _write(tmp_path / "ja_categories.txt", "sports\npolitics\n sports\n")
    data = load_mewsc16(str(tmp_path), "ja")
    # EASE's reader: both files stripped, lines with an empty sentence left out
    assert data.texts == ["文一", "文三"] and data.labels == ["sports", "sports"]
    assert len(data.skipped) == 1 and data.rejected == []
    _write(tmp_path / "ko_sentences.txt", "a\nb\n")
    _write(tmp_path / "ko_categories.txt", "x\n")
    with pytest.raises(ValueError, match="line-aligned"):
        load_mewsc16(str(tmp_path), "ko")


def test_mldoc(tmp_path):
    data = load_mldoc(_write(tmp_path / "german.dev", "CCAT\tDie Firma meldet Gewinne.\nXXXX\tnope\nMCAT\tMärkte\tsteigen.\n"))
    assert data.labels == ["CCAT", "MCAT"] and data.texts[1] == "Märkte\tsteigen." and len(data.rejected) == 1


def test_xnli_dev_and_mt_train(tmp_path):
    header = "language\tgold_label\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1\tsentence2\tpairID\n"
    url = _write(tmp_path / "xnli.dev.tsv", header + "fr\tneutral\t-\t-\tIl pleut.\tIl fait froid.\t1\n"
                 "de\tentailment\t-\t-\tEs regnet.\tEs ist nass.\t2\nfr\tunknown\t-\t-\ta\tb\t3\n")
    fr = load_xnli(url, "fr")
    assert fr.first == ["Il pleut."] and fr.labels == ["neutral"] and len(fr.rejected) == 1
    train = load_xnli_mt_train(_write(tmp_path / "multinli.train.en.tsv", "premise\thypo\tlabel\nA\tB\tcontradictory\n"))
    assert train.labels == ["contradiction"]


def test_pawsx(tmp_path):
    url = _write(tmp_path / "dev_2k.tsv", "id\tsentence1\tsentence2\tlabel\n1\tA b.\tB a.\t1\n2\tC.\t\t0\n3\tD \"q.\tE.\t0\n")
    data = load_pawsx(url)
    assert data.first == ["A b.", "D \"q."] and data.labels == ["1", "0"] and len(data.rejected) == 1


def test_marc(tmp_path):
    rows = [{"review_body": "Great", "review_title": "Yes", "stars": 5}, {"review_body": "", "stars": 1}, {"stars": 3}]
    url = _write(tmp_path / "dataset_de_test.json", "\n".join(json.dumps(r) for r in rows) + "\n")
    data = load_marc(url, with_title=True)
    assert data.texts == ["Yes. Great"] and data.labels == ["5"] and len(data.rejected) == 2


def test_qam(tmp_path):
    data = load_qam(_write(tmp_path / "QAM.dev.fr", "q1\tp1\t1\nq2\tp2\t0\nbad\n"))
    assert data.first == ["q1", "q2"] and data.labels == ["1", "0"] and len(data.rejected) == 1


def test_wmt20_qe(tmp_path):
    header = "index\toriginal\ttranslation\tscores\tmean\tz_scores\tz_mean\tmodel_scores\n"
    long_text = "x" * 200_000  # longer than the csv module's default field limit
    url = _write(tmp_path / "dev.eten.df.short.tsv", header + "0\t\"Tere,\" ütles ta.\tHello.\t[90]\t90\t[0.5]\t0.5\t-0.2\n"
                 "1\tHead aega.\tGoodbye.\t[10]\t10\t[-1]\tnan?\t-0.9\n2\tA.\tB.\t[1]\t1\t[1]\tnan\t0\n3\ttoo\tfew\n\n"
                 f"4\t{long_text}\tLong.\t[5]\t5\t[0]\t-1.25\t0\n")
    data = load_wmt20_qe(url)
    # quotes are literal (no CSV quoting), NaN scores and short rows are rejected, blank lines skipped
    assert data.first == ["\"Tere,\" ütles ta.", long_text] and data.second == ["Hello.", "Long."] and data.scores == [0.5, -1.25]
    assert [where.rsplit(":", 1)[1] for where, _ in data.rejected] == ["3", "4", "5"]
    with pytest.raises(ValueError, match="lacks column"):
        load_wmt20_qe(url, score_column="da")
    with pytest.raises(ValueError, match="lacks column"):  # even with no data row
        load_wmt20_qe(_write(tmp_path / "test20.eten.df.short.tsv", "index\toriginal\ttranslation\n"))


def test_require_clean_names_the_bad_rows(tmp_path):
    from interlingua.evaluation.data.records import require_clean

    pairs = load_sts2017_extended(_write(tmp_path / "STS.en-en.txt", "a\tb\t1\nbad\n\n"))
    with pytest.raises(ValueError, match=r"STS.en-en.txt: 1 malformed row\(s\), e.g. .*STS.en-en.txt:2: expected 3"):
        require_clean(pairs, "STS.en-en.txt")
    assert require_clean(load_sts2017_extended(_write(tmp_path / "ok.txt", "a\tb\t1\n\n")), "ok").scores == [1.0]


def test_official_tasks_chain_loader_encoder_and_metric(tmp_path):
    import numpy as np

    from interlingua.evaluation.tasks.official import bucc_task, qe_task, sts_task, tatoeba_task, transfer_task

    class Lengths:
        name = "lengths"

        def encode(self, texts):
            return np.array([[len(t), 1.0 + t.count(" ")] for t in texts], dtype=float)

    sts = load_sts2017_extended(_write(tmp_path / "STS.en-en.txt", "a b\ta b\t5\na\tb c d e\t0\nab\tab c\t3\n"))
    assert sts_task(sts, Lengths())["spearman"] == pytest.approx(100.0)
    _write(tmp_path / "tatoeba.x-eng.x", "a\nbb cc\n")
    _write(tmp_path / "tatoeba.x-eng.eng", "a\nbb cc\n")
    assert tatoeba_task(load_tatoeba(str(tmp_path), "x"), Lengths())["average"] == pytest.approx(100.0)
    qe = load_wmt20_qe(_write(tmp_path / "qe.tsv", "original\ttranslation\tz_mean\na\ta\t1\na\tb c d\t-1\nab\tab c\t0\n"))
    cosines = [1.0, (5 + 3) / np.sqrt(2) / np.sqrt(25 + 9), 1.0]  # [len, 1 + spaces]: [1,1]·[5,3]; [2,1] ∥ [4,2]
    assert qe_task(qe, Lengths())["pearson"] == pytest.approx(100 * np.corrcoef(cosines, [1, -1, 0])[0, 1])
    pairs = load_qam(_write(tmp_path / "QAM.train", "a\ta\t1\na\tb c d\t0\nab\tab\t1\nab\tb c d e\t0\n"))
    result = transfer_task(pairs, {"fr": pairs}, {"fr": pairs}, Lengths())
    assert set(result) == {"fr", "best_C", "dev_accuracy"}
    for split in ("sample", "training"):
        _write(tmp_path / f"x-en.{split}.x", "".join(f"x-{i}\t{'w ' * i}\n" for i in range(1, 8)))
        _write(tmp_path / f"x-en.{split}.en", "".join(f"en-{i}\t{'w ' * i}\n" for i in range(1, 8)))
        _write(tmp_path / f"x-en.{split}.gold", "x-1\ten-1\nx-2\ten-2\n")
    class WordCountOneHot:
        name = "one-hot word count"

        def encode(self, texts):
            return np.eye(10)[[len(t.split()) for t in texts]]

    scores = bucc_task(load_bucc(str(tmp_path), "x", "sample"), load_bucc(str(tmp_path), "x", "training"), WordCountOneHot(), k=2)
    # every true pair has margin 1 / (0.5/2 + 0.5/2) = 2, all 7 tie, so all are kept: P = 2/7, R = 1
    assert scores["threshold"] == pytest.approx(2.0)
    assert scores["f1"] == pytest.approx(100 * 2 * (2 / 7) / (2 / 7 + 1))
