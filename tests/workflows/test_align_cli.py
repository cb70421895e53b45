"""``interlingua align``: output line per input line, bad-input handling, rejects, start-up imports."""

import argparse
import json
import re
import subprocess
import sys

import pytest

from interlingua.operators.align.pharaoh import parse_pharaoh
from interlingua.operators.align.symmetrize import SYMMETRIZATIONS, symmetrize
from interlingua.workflows.commands import align
from interlingua.core.errors import UserError

SRC = ["the house is small", "the book is big", "", "a small house", "the house", "big book", "the big house is old"]
TGT = ["das haus ist klein", "das buch ist gross", "leer", "ein kleines haus", "das haus", "grosses buch", "das grosse haus ist alt"]


def run_align(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    align.add_arguments(parser)
    return align.run(parser.parse_args(list(argv)))


def write(path, lines: list[bytes]) -> str:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return str(path)


def test_alignment_output_keeps_line_numbers_and_records_rejects(tmp_path):
    src_lines = [s.encode() for s in SRC * 3] + [b"the house " * 10, b"bad \xff byte"]
    tgt_lines = [t.encode() for t in TGT * 3] + [b"das haus", b"schlecht"]
    src, tgt = write(tmp_path / "s.txt", src_lines), write(tmp_path / "t.txt", tgt_lines)
    out, fwd, rev = (str(tmp_path / n) for n in ("out.txt", "fwd.txt", "rev.txt"))
    assert run_align("--src", src, "--tgt", tgt, "--out", out, "--forward", fwd, "--reverse", rev, "--max-length", "12") == 0

    out_lines = open(out, encoding="utf-8").read().split("\n")[:-1]
    fwd_lines = open(fwd, encoding="utf-8").read().split("\n")[:-1]
    rev_lines = open(rev, encoding="utf-8").read().split("\n")[:-1]
    assert len(out_lines) == len(fwd_lines) == len(rev_lines) == len(src_lines)
    assert out_lines[0] == "0-0 1-1 2-2 3-3"
    assert out_lines[2] == "" and out_lines[-2] == "" and out_lines[-1] == ""  # empty line, too long, bad UTF-8
    for o, f, r in zip(out_lines, fwd_lines, rev_lines):
        assert set(parse_pharaoh(o)) == symmetrize(parse_pharaoh(f), parse_pharaoh(r), "grow-diag-final-and")

    rejects = [json.loads(line) for line in open(out + ".rejects.jsonl", encoding="utf-8")]
    assert [(r["line"], r["reason"]) for r in rejects] == [(22, "too_long"), (23, "invalid_utf8")]
    assert rejects[0]["tokens"] == 20 and rejects[1]["byte_offset_in_line"] == 4
    assert rejects[0]["file"] == rejects[1]["file"] == src  # each record names the file its line is in
    assert rejects[1]["byte_offset"] == sum(len(line) + 1 for line in src_lines[:22]) + 4


def test_tokens_are_split_at_spaces_and_tabs_only_as_fast_align_splits_them(tmp_path):
    """fast_align's tokens end at a space or a tab only: a no-break space, U+3000, \\v or \\f is inside a token, and
    the link indices count those tokens (str.split() cut them: indices into another token sequence)."""
    from interlingua.operators.align.bidirectional_aligner import BidirectionalAligner
    from interlingua.operators.align.fast_align_training import FastAlignParameters

    src_text = SRC * 3 + ["the\u00a0house is\u3000small", "big\x0bbook\x0c  the\tbook"]
    tgt_text = TGT * 3 + ["das haus ist klein", "grosses\u2009buch das buch"]
    src, tgt = write(tmp_path / "s.txt", [s.encode() for s in src_text]), write(tmp_path / "t.txt", [t.encode() for t in tgt_text])
    out, fwd, params = str(tmp_path / "o.txt"), str(tmp_path / "f.txt"), str(tmp_path / "params")
    assert run_align("--src", src, "--tgt", tgt, "--out", out, "--forward", fwd, "--save-params", params) == 0
    tokens = {"the\u00a0house", "is\u3000small", "big\x0bbook\x0c", "grosses\u2009buch"}
    parameters = FastAlignParameters.load(params)
    assert tokens <= set(parameters.forward.table.vocabulary)
    sources = [[t for t in s.replace("\t", " ").split(" ") if t] for s in src_text]
    targets = [[t for t in s.replace("\t", " ").split(" ") if t] for s in tgt_text]
    assert [len(s) for s in sources[-2:]] == [2, 3] and [len(t) for t in targets[-2:]] == [4, 3]
    forward, _, symmetrized = BidirectionalAligner(parameters).align_pharaoh(sources, targets)
    assert open(out, encoding="utf-8").read().split("\n")[:-1] == symmetrized
    assert open(fwd, encoding="utf-8").read().split("\n")[:-1] == forward


@pytest.mark.parametrize("learner", ["interlingua", "systran"])
def test_a_nul_character_in_a_token_rejects_its_line(tmp_path, capsys, learner):
    """systran-align's table format ends each word at NUL: a token holding one corrupted both tables (our reader refused
    them, systran_align.Aligner crashed loading them) and ended a systran-learner run in a ValueError after learning."""
    from interlingua.operators.align.lexical_table import read_systran_table

    src_lines = [s.encode() for s in SRC * 3] + ["the hö\x00use".encode(), b"the house"]
    tgt_lines = [t.encode() for t in TGT * 3] + [b"das haus", b"das \x00"]
    src, tgt = write(tmp_path / "s.txt", src_lines), write(tmp_path / "t.txt", tgt_lines)
    out, params = str(tmp_path / "o.txt"), tmp_path / "params"
    assert run_align("--src", src, "--tgt", tgt, "--out", out, "--learner", learner, "--save-params", str(params)) == 0
    assert open(out, encoding="utf-8").read().split("\n")[-3:] == ["", "", ""]
    rejects = [json.loads(line) for line in open(out + ".rejects.jsonl", encoding="utf-8")]
    assert [(r["line"], r["side"], r["reason"], r["byte_offset_in_line"]) for r in rejects] == [
        (22, "src", "nul_character", 7), (23, "tgt", "nul_character", 4)]
    err = capsys.readouterr().err
    assert "(21 accepted, 3 empty kept with empty alignment, 2 rejected" in err
    for name in ("forward", "reverse"):
        assert "house" in read_systran_table(str(params / f"{name}.bin")).vocabulary


def test_summary_counts_each_line_once(tmp_path, capsys):
    """A line rejected as too long whose other side is empty was counted as rejected and as empty kept (3 lines:
    "2 accepted, 1 empty kept, 1 rejected"); a side of only a no-break space is one token, not empty."""
    src = write(tmp_path / "s.txt", [b"the house", b"the book is big", b"\xc2\xa0"])
    tgt = write(tmp_path / "t.txt", [b"das haus", b"", b"das"])
    assert run_align("--src", src, "--tgt", tgt, "--out", str(tmp_path / "o.txt"), "--max-length", "3") == 0
    assert "aligned 3 lines (2 accepted, 0 empty kept with empty alignment, 1 rejected" in capsys.readouterr().err
    tgt = write(tmp_path / "t.txt", [b"das haus", b"", b""])
    assert run_align("--src", src, "--tgt", tgt, "--out", str(tmp_path / "o.txt"), "--max-length", "5") == 0
    assert "aligned 3 lines (3 accepted, 2 empty kept with empty alignment, 0 rejected" in capsys.readouterr().err


def test_no_length_limit_by_default_as_fast_align(tmp_path, capsys):
    """fast_align aligns a pair of any length; the default --max-length was 256, so a longer pair gave an empty line
    and was left out of learning, which changed the links of other lines against fast_align's (535 of 2,003 forward
    lines on the Bible's first 2,000 verses with three 900-token pairs added). eflomal's default is its own limit."""
    long_src, long_tgt = " ".join(SRC * 15).encode(), " ".join(TGT * 15).encode()  # 285 and 315 tokens
    src = write(tmp_path / "s.txt", [line.encode() for line in SRC] + [long_src])
    tgt = write(tmp_path / "t.txt", [line.encode() for line in TGT] + [long_tgt])
    default, wide = tmp_path / "default.txt", tmp_path / "wide.txt"
    assert run_align("--src", src, "--tgt", tgt, "--out", str(default)) == 0
    assert "(8 accepted, 1 empty kept with empty alignment, 0 rejected" in capsys.readouterr().err
    assert default.read_text().splitlines()[-1] != ""
    assert run_align("--src", src, "--tgt", tgt, "--out", str(wide), "--max-length", "1000") == 0
    assert default.read_bytes() == wide.read_bytes()
    assert run_align("--src", src, "--tgt", tgt, "--out", str(tmp_path / "cut.txt"), "--max-length", "256") == 0
    assert "1 rejected" in capsys.readouterr().err
    args = _parsed("--src", src, "--tgt", tgt, "--out", str(tmp_path / "e"), "--aligner", "eflomal")
    align._validate(args)
    assert args.max_length == 1023


def _parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    align.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_links_are_printed_in_fast_align_and_atools_order(tmp_path):
    """--forward, --reverse and OUT byte for byte as fast_align prints its links (its loop over target positions:
    "i-j" by j; fast_align -r loops over the source positions: by i) and atools its symmetrized ones (by i, then j);
    the forward lines were sorted by (i, j). Decoded from the saved parameters (--params, the unpruned tables the folder
    keeps: the training run's links, tests/operators/test_align_training_output.py)."""
    from interlingua.operators.align.fast_align_training import FastAlignParameters

    from ..operators.test_align_fast_align import fast_align_viterbi, varied_corpus

    pairs = varied_corpus(150, seed=3)
    src = write(tmp_path / "s.txt", [" ".join(s).encode() for s, _ in pairs])
    tgt = write(tmp_path / "t.txt", [" ".join(t).encode() for _, t in pairs])
    out, fwd, rev, params = (str(tmp_path / n) for n in ("o.txt", "f.txt", "r.txt", "params"))
    assert run_align("--src", src, "--tgt", tgt, "--out", out, "--save-params", params) == 0
    assert run_align("--src", src, "--tgt", tgt, "--out", out, "--forward", fwd, "--reverse", rev, "--params", params) == 0
    parameters = FastAlignParameters.load(params)
    forward, reverse = parameters.forward, parameters.reverse
    expected_forward, expected_reverse, expected_out = [], [], []
    for s, t in pairs:
        f_links = fast_align_viterbi(forward, [forward.table.word_ids[w] for w in s], [forward.table.word_ids[w] for w in t])
        r_links = fast_align_viterbi(reverse, [reverse.table.word_ids[w] for w in t], [reverse.table.word_ids[w] for w in s])
        expected_forward.append(" ".join(f"{i}-{j}" for i, j in f_links))  # fast_align: (max_index - 1) << '-' << j
        expected_reverse.append(" ".join(f"{i}-{j}" for j, i in r_links))  # fast_align -r: j << '-' << (max_index - 1)
        links = symmetrize(f_links, [(i, j) for j, i in r_links], "grow-diag-final-and")
        expected_out.append(" ".join(f"{i}-{j}" for i in range(len(s)) for j in range(len(t)) if (i, j) in links))
    assert any(line.split() != sorted(line.split(), key=lambda x: tuple(map(int, x.split("-")))) for line in expected_forward)
    for path, expected in ((fwd, expected_forward), (rev, expected_reverse), (out, expected_out)):
        assert open(path, "rb").read() == "".join(line + "\n" for line in expected).encode()


def test_different_line_counts_name_both_counts_and_the_first_file(tmp_path):
    src, tgt = write(tmp_path / "s.txt", [b"a", b"b", b"c"]), write(tmp_path / "t.txt", [b"a", b"b"])
    with pytest.raises(UserError, match=r"s\.txt has 3 lines but .*t\.txt has 2 lines"):
        run_align("--src", src, "--tgt", tgt, "--out", str(tmp_path / "o.txt"))


def test_options_are_validated(tmp_path):
    src = write(tmp_path / "s.txt", [b"a"])
    with pytest.raises(UserError, match="--workers must be >= 1, got 0"):
        run_align("--src", src, "--tgt", src, "--out", str(tmp_path / "o"), "--workers", "0")
    with pytest.raises(UserError, match="--src-lang"):
        run_align("--src", src, "--tgt", src, "--out", str(tmp_path / "o"), "--tokenize", "moses")
    # eflomal gives a sentence of 1,024 tokens or more no link: such a line would be lost, counted as accepted
    with pytest.raises(UserError, match="--max-length 1024 is above eflomal's 1023 tokens per sentence"):
        run_align("--src", src, "--tgt", src, "--out", str(tmp_path / "o"), "--aligner", "eflomal", "--max-length", "1024")


def test_an_empty_or_missing_input_file_is_one_line(tmp_path):
    """Two 0-byte files said "aligned 0 lines" with exit 0."""
    empty = tmp_path / "e.txt"
    empty.write_bytes(b"")
    with pytest.raises(UserError, match=r"input .*e\.txt is empty \(0 bytes\)"):
        run_align("--src", str(empty), "--tgt", str(empty), "--out", str(tmp_path / "o"))
    with pytest.raises(UserError, match=r"input .*nope\.txt not found"):
        run_align("--src", str(tmp_path / "nope.txt"), "--tgt", str(empty), "--out", str(tmp_path / "o"))


def test_all_empty_input_gives_empty_alignments(tmp_path):
    src, tgt = write(tmp_path / "s.txt", [b"", b"x"]), write(tmp_path / "t.txt", [b"y", b""])
    out = str(tmp_path / "o.txt")
    assert run_align("--src", src, "--tgt", tgt, "--out", out) == 0
    assert open(out).read() == "\n\n"


def test_learner_and_aligner_flags(tmp_path):
    src, tgt = write(tmp_path / "s.txt", [s.encode() for s in SRC * 4]), write(tmp_path / "t.txt", [t.encode() for t in TGT * 4])
    outputs = {}
    for learner in ("interlingua", "systran"):
        out = str(tmp_path / f"{learner}.txt")
        assert run_align("--src", src, "--tgt", tgt, "--out", out, "--learner", learner, "--save-params", str(tmp_path / learner)) == 0
        outputs[learner] = open(out, encoding="utf-8").read().split("\n")
        assert json.load(open(tmp_path / learner / "fast_align_params.json"))["learner"] == learner
    assert outputs["interlingua"][0] == "0-0 1-1 2-2 3-3" and len(outputs["systran"]) == len(outputs["interlingua"])
    out = str(tmp_path / "eflomal.txt")
    assert run_align("--src", src, "--tgt", tgt, "--out", out, "--aligner", "eflomal", "--save-params", str(tmp_path / "ef")) == 0
    assert len(open(out, encoding="utf-8").read().split("\n")) == len(SRC) * 4 + 1
    with pytest.raises(UserError, match="does not contain eflomal_params.json .*it holds fast_align's parameters: use "
                                        "--aligner fast_align"):
        run_align("--src", src, "--tgt", tgt, "--out", out, "--aligner", "eflomal", "--params", str(tmp_path / "interlingua"))
    with pytest.raises(UserError, match="does not contain fast_align_params.json .*it holds eflomal's parameters: use "
                                        "--aligner eflomal"):
        run_align("--src", src, "--tgt", tgt, "--out", out, "--params", str(tmp_path / "ef"))


def test_an_output_that_is_an_input_or_another_output_is_refused_before_anything_runs(tmp_path):
    src, tgt = write(tmp_path / "s.txt", [b"a b"]), write(tmp_path / "t.txt", [b"c d"])
    (tmp_path / "link.txt").symlink_to(tmp_path / "s.txt")
    cases = [(["--out", src], re.escape(f"--out {src} is the same file as --src {src} (an input)")),
             (["--out", str(tmp_path / "link.txt")], "--out .*link.txt is the same file as --src .*s.txt \\(an input\\)"),
             (["--out", str(tmp_path / "o"), "--rejects", tgt], f"--rejects {tgt} is the same file as --tgt"),
             (["--out", str(tmp_path / "o"), "--forward", str(tmp_path / "o")], "--forward .* is the same file as --out .* "
                                                                                "\\(another output\\)"),
             (["--out", str(tmp_path / "o"), "--forward", str(tmp_path / "f"), "--reverse", str(tmp_path / "f")],
              "--reverse .* is the same file as --forward")]
    for argv, message in cases:
        with pytest.raises(UserError, match=message):
            run_align("--src", src, "--tgt", tgt, *argv)
    assert open(src, "rb").read() == b"a b\n" and open(tgt, "rb").read() == b"c d\n"  # untouched
    assert run_align("--src", src, "--tgt", src, "--out", str(tmp_path / "o")) == 0  # one file on both sides: allowed


def test_options_that_would_be_ignored_are_refused(tmp_path):
    src = write(tmp_path / "s.txt", [b"a"])
    params = tmp_path / "p"
    assert run_align("--src", src, "--tgt", src, "--out", str(tmp_path / "o"), "--save-params", str(params)) == 0
    base = ["--src", src, "--tgt", src, "--out", str(tmp_path / "o")]
    cases = [(["--aligner", "eflomal", "--iterations", "3"], "--iterations sets fast_align's EM iterations; eflomal"),
             (["--aligner", "eflomal", "--learner", "systran"], "--learner systran learns fast_align's parameters"),
             (["--params", str(params), "--save-params", str(tmp_path / "q")], "--save-params applies to learning"),
             (["--params", str(params), "--iterations", "3", "--learn-sample", "5"],
              "--iterations, --learn-sample apply to learning parameters, which --params skips")]
    for argv, message in cases:
        with pytest.raises(UserError, match=message):
            run_align(*base, *argv)
    assert run_align(*base, "--params", str(params)) == 0


def _damage(folder, name, how):
    path = folder / name
    if how == "cut":
        path.write_bytes(path.read_bytes()[:200])
    elif how == "text":
        path.write_text("{ not json", encoding="utf-8")
    return path


@pytest.mark.parametrize("workers", ["1", "3"])
def test_damaged_or_swapped_parameters_are_one_line_before_ray_starts(tmp_path, workers, monkeypatch):
    """A cut-short table was a zip error (with --workers N, hundreds of lines of actor tracebacks after Ray started);
    a table swapped for the other direction's decoded silently with the wrong model."""
    import shutil

    import interlingua.core.runtime as runtime

    src, tgt = write(tmp_path / "s.txt", [s.encode() for s in SRC]), write(tmp_path / "t.txt", [t.encode() for t in TGT])
    good = tmp_path / "good"
    assert run_align("--src", src, "--tgt", tgt, "--out", str(tmp_path / "o"), "--save-params", str(good)) == 0
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: pytest.fail("Ray started"))
    base = ["--src", src, "--tgt", tgt, "--out", str(tmp_path / "o"), "--workers", workers, "--params"]
    for name, how, message in [("forward.npz", "cut", r"forward\.npz is not the file its folder's record names"),
                               ("fast_align_params.json", "text", r"fast_align_params\.json is not valid JSON"),
                               ("forward.npz", "swap", r"forward\.npz is not the file its folder's record names")]:
        folder = tmp_path / f"{how}-{workers}"
        shutil.copytree(good, folder)
        if how == "swap":
            shutil.copyfile(folder / "reverse.npz", folder / "forward.npz")
        else:
            _damage(folder, name, how)
        with pytest.raises(UserError, match=rf"^--params: .*{message}.*--save-params"):
            run_align(*base, str(folder))


def _count_loads(monkeypatch, after=lambda directory: None) -> list[str]:
    """The folders ``FastAlignParameters.load`` reads in this process, in order; ``after(folder)`` runs after each."""
    from interlingua.operators.align.fast_align_training import FastAlignParameters

    reads, load = [], FastAlignParameters.load.__func__

    def counted(cls, directory):
        reads.append(directory)
        try:
            return load(cls, directory)
        finally:
            after(directory)

    monkeypatch.setattr(FastAlignParameters, "load", classmethod(counted))
    return reads


def _stand_in_for_ray(monkeypatch) -> None:
    """`align --workers N` without Ray: one operator built per worker in this process, as Ray builds one per actor;
    the object store is the identity."""
    from types import SimpleNamespace

    import ray
    import ray.data

    import interlingua.core.runtime as runtime
    import interlingua.operators.runner as runner

    def pool(rows, op_cls, op_kwargs, *, concurrency, batch_size):
        parts = [runner.run_in_process(rows[w::concurrency], op_cls, op_kwargs) for w in range(concurrency)]
        return SimpleNamespace(iter_batches=lambda **_: (batch for part in parts for batch in part))

    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: None)
    monkeypatch.setattr(ray, "put", lambda value: value)
    monkeypatch.setattr(ray.data, "from_items", lambda rows, **_: rows)
    monkeypatch.setattr(runner, "run_operator", pool)


def test_params_are_read_once_on_the_driver_with_several_workers(tmp_path, monkeypatch):
    """With --workers N each actor read and checked the --params folder again after the driver had. Here the actor
    pool is stood in for in this process (one operator built per worker, as Ray builds one per actor), so every read
    is counted: the driver's one, none by the workers (they get the tables the driver read)."""
    src, tgt = write(tmp_path / "s.txt", [s.encode() for s in SRC]), write(tmp_path / "t.txt", [t.encode() for t in TGT])
    params = str(tmp_path / "params")
    assert run_align("--src", src, "--tgt", tgt, "--out", str(tmp_path / "o"), "--save-params", params) == 0
    assert run_align("--src", src, "--tgt", tgt, "--out", str(tmp_path / "one"), "--params", params) == 0
    _stand_in_for_ray(monkeypatch)
    reads = _count_loads(monkeypatch)
    assert run_align("--src", src, "--tgt", tgt, "--out", str(tmp_path / "two"), "--params", params,
                     "--workers", "2") == 0
    assert reads == [params]
    assert (tmp_path / "two").read_text() == (tmp_path / "one").read_text()


@pytest.mark.parametrize(("learn", "decode"), [
    (["--aligner", "eflomal", "--save-params", "{params}"], ["--aligner", "eflomal", "--params", "{params}"]),
    (["--learner", "systran"], ["--learner", "systran"]),
], ids=["eflomal-params", "systran-learns"])
def test_several_workers_without_tables_in_memory_finish(tmp_path, monkeypatch, learn, decode):
    """eflomal, and fast_align learned by systran's learner, hand the actors a folder, not tables in memory: that path
    of --workers N gives one worker's links too. Ray stood in for as above."""
    src, tgt = write(tmp_path / "s.txt", [s.encode() for s in SRC]), write(tmp_path / "t.txt", [t.encode() for t in TGT])
    params = str(tmp_path / "params")
    learn, decode = [a.format(params=params) for a in learn], [a.format(params=params) for a in decode]
    assert run_align("--src", src, "--tgt", tgt, "--out", str(tmp_path / "one"), *learn) == 0
    _stand_in_for_ray(monkeypatch)
    assert run_align("--src", src, "--tgt", tgt, "--out", str(tmp_path / "two"), "--workers", "2", *decode) == 0
    assert (tmp_path / "two").read_text() == (tmp_path / "one").read_text() != ""


@pytest.mark.slow
def test_the_actors_align_with_the_params_the_driver_read(tmp_path, monkeypatch, ray_local):
    """On Ray's actors: the --params folder is moved away as soon as the driver has read it, and the two actors still
    give one worker's links (they never open it). The tables reach them through the object store: the operator's
    arguments, which Ray Data pickles into the operator it ships (and warns of above 100 MiB: the whole Bible's
    unpruned tables are ~138 MB), hold no table's bytes."""
    import shutil

    import ray.cloudpickle

    import interlingua.operators.runner as runner

    arguments, run_operator = [], runner.run_operator

    def recorded(ds, op_cls, op_kwargs, **options):
        arguments.append(op_kwargs)
        return run_operator(ds, op_cls, op_kwargs, **options)

    def assert_no_tables_in(op_kwargs):
        held = op_kwargs["parameters"]
        held = ray.get(held) if isinstance(held, ray.ObjectRef) else held
        shipped = ray.cloudpickle.dumps(op_kwargs)
        for table in (held.forward.table, held.reverse.table):
            assert table.probabilities.size >= 10 and table.probabilities.tobytes() not in shipped

    monkeypatch.setattr(runner, "run_operator", recorded)
    src, tgt = write(tmp_path / "s.txt", [s.encode() for s in SRC]), write(tmp_path / "t.txt", [t.encode() for t in TGT])
    params = str(tmp_path / "params")
    assert run_align("--src", src, "--tgt", tgt, "--out", str(tmp_path / "o"), "--save-params", params) == 0
    assert run_align("--src", src, "--tgt", tgt, "--out", str(tmp_path / "one"), "--params", params) == 0
    reads = _count_loads(monkeypatch, after=lambda directory: shutil.move(directory, str(tmp_path / "moved")))
    assert run_align("--src", src, "--tgt", tgt, "--out", str(tmp_path / "two"), "--params", params,
                     "--workers", "2") == 0
    assert reads == [params] and not (tmp_path / "params").exists()
    assert (tmp_path / "two").read_text() == (tmp_path / "one").read_text()
    # a run that learns hands its unpruned tables to the actors the same way: one worker's links
    assert run_align("--src", src, "--tgt", tgt, "--out", str(tmp_path / "learned2"), "--workers", "2") == 0
    assert (tmp_path / "learned2").read_text() == (tmp_path / "o").read_text()
    assert len(arguments) == 2
    for op_kwargs in arguments:
        assert_no_tables_in(op_kwargs)


def test_choices_match_the_library_and_start_up_imports_only_stdlib():
    from interlingua.operators.align.align_operator import ALIGNERS
    from interlingua.operators.align.fast_align_training import LEARNERS

    assert align.SYMMETRIZATIONS == SYMMETRIZATIONS
    assert align.LEARNERS == LEARNERS and align.ALIGNERS == ALIGNERS
    from interlingua.operators.align.fast_align_training import FastAlignSettings

    assert align.FAST_ALIGN_ITERATIONS == FastAlignSettings().iterations
    code = ("import sys, interlingua.workflows.commands.align as a, argparse; a.add_arguments(argparse.ArgumentParser()); "
            "heavy = {'numpy', 'ray', 'torch', 'systran_align', 'sacremoses'} & set(sys.modules); print(sorted(heavy))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


@pytest.mark.slow
def test_eflomal_gives_the_same_links_on_one_worker_and_on_ray_actors(tmp_path, monkeypatch, ray_local):
    """eflomal's links varied from run to run (an unseeded sampler) and with how Ray cut its batches: one worker aligns
    lines k * UNIT_PAIRS .. together, and so do the actors."""
    from interlingua.operators.align import eflomal_backend

    from ..operators.test_align_fast_align import synthetic_corpus

    monkeypatch.setattr(eflomal_backend, "UNIT_PAIRS", 50)  # the driver's cut (the actors align each unit whole)
    corpus = synthetic_corpus(130, seed=21)
    src = write(tmp_path / "src", [" ".join(s).encode() for s, _ in corpus])
    tgt = write(tmp_path / "tgt", [" ".join(t).encode() for _, t in corpus])
    outputs = {}
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}"
        assert run_align("--src", src, "--tgt", tgt, "--out", str(out), "--aligner", "eflomal", "--workers", workers,
                         "--forward", str(out) + ".f", "--reverse", str(out) + ".r") == 0
        outputs[workers] = [(out.parent / (out.name + ext)).read_text() for ext in ("", ".f", ".r")]
    assert outputs["1"] == outputs["2"]
    assert len(outputs["1"][0].splitlines()) == 130 and outputs["1"][0].count("-") > 300
