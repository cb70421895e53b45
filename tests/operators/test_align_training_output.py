"""``interlingua align`` learning on its input prints fast_align's training-run links (``fast_align -i corpus -d -o -v``,
the links of its last iteration, decoded with the unpruned table it holds), not those of the beam-pruned tables
(``fast_align -f``); ``--params DIR`` decodes the unpruned tables the folder keeps (the same links), and a folder
without them (saved before, or by ``--learner systran``) its pruned tables."""

import argparse
import json
import math
import shutil

from interlingua.operators.align.pharaoh import parse_pharaoh
from interlingua.operators.align.symmetrize import symmetrize
from interlingua.workflows.commands import align

from .test_align_fast_align import fast_align_compute_z, fast_align_dlog_z, varied_corpus


def py_digamma(x: float) -> float:
    """fast_align's ``Md::digamma``: recurrence up to 7, then the asymptotic series."""
    result = 0.0
    while x < 7:
        result -= 1 / x
        x += 1
    x -= 0.5
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    return result + math.log(x) + xx2 / 24.0 - 7.0 / 960.0 * xx4 + 31.0 / 8064.0 * xx4 * xx2 - 127.0 / 30720.0 * xx4 * xx4


def fast_align_training_run(pairs, iterations: int = 5, reverse: bool = False, p0: float = 0.08, alpha: float = 0.01,
                            tension: float = 4.0, learned: dict | None = None) -> list[str]:
    """fast_align ``-d -o -v [-r]`` written out with dicts: ``iterations`` passes over the corpus; each but the last
    accumulates posteriors (NULL first, prob_align_null, diagonal prior over ComputeZ / (1 - p0)), then (from the second
    pass on) 8 tension steps of 20 x (empirical - model feature) clipped to [0.1, 14], then the VB M-step on every entry;
    the last pass prints, per target position, the best source position by a strict ``>`` from NULL on. The table is
    never pruned. Words are strings, so a literal ``<eps>`` is the NULL word, as in fast_align's dictionary."""
    table: dict[str, dict[str, float]] | None = None  # None: fast_align's uninitialized 1e-9
    size_counts: dict[tuple[int, int], int] = {}
    lines: list[str] = []
    for iteration in range(iterations):
        final = iteration == iterations - 1
        counts: dict[str, dict[str, float]] = {}
        emp_feat = toks = 0.0
        for src, tgt in pairs:
            if reverse:
                src, tgt = tgt, src
            n, m = len(src), len(tgt)
            if iteration == 0:
                size_counts[(m, n)] = size_counts.get((m, n), 0) + 1
            toks += m
            links = []
            for j, f in enumerate(tgt):
                probs = [(table["<eps>"].get(f, 1e-9) if table else 1e-9) * p0]
                az = fast_align_compute_z(j + 1, m, n, tension) / (1.0 - p0)
                for i in range(1, n + 1):
                    prior = math.exp(-abs(i / n - (j + 1) / m) * tension) / az
                    probs.append((table[src[i - 1]].get(f, 1e-9) if table else 1e-9) * prior)
                if final:
                    best, best_p = 0, probs[0]
                    for i in range(1, n + 1):
                        if probs[i] > best_p:
                            best, best_p = i, probs[i]
                    if best:
                        links.append(f"{j}-{best - 1}" if reverse else f"{best - 1}-{j}")
                    continue
                total = sum(probs)
                counts.setdefault("<eps>", {})
                counts["<eps>"][f] = counts["<eps>"].get(f, 0.0) + probs[0] / total
                for i in range(1, n + 1):
                    posterior = probs[i] / total
                    row = counts.setdefault(src[i - 1], {})
                    row[f] = row.get(f, 0.0) + posterior
                    emp_feat += -abs(i / n - j / m) * posterior  # fast_align's Feature(j, i, m, n): 0-based j
            if final:
                lines.append(" ".join(links))
        if final:
            break
        if learned is not None:
            learned["emp_feat"] = emp_feat
        emp_feat /= toks
        if iteration > 0:
            for _ in range(8):
                mod_feat = sum(count * fast_align_dlog_z(j, m, n, tension)
                               for (m, n), count in size_counts.items() for j in range(1, m + 1)) / toks
                tension = min(max(tension + (emp_feat - mod_feat) * 20.0, 0.1), 14.0)
        table = {}
        for e, row in counts.items():
            digamma_total = py_digamma(sum(c + alpha for c in row.values()) or 1.0)
            table[e] = {f: math.exp(py_digamma(c + alpha) - digamma_total) for f, c in row.items()}
    if learned is not None:
        learned.update(tension=tension, table=table)
    return lines


def distinct_word_corpus(n: int, seed: int) -> list[tuple[list[str], list[str]]]:
    """:func:`varied_corpus` (1-25 source words, targets dropping, inserting and swapping words, so lengths differ both
    ways) with each word kept once per side: two equal words at positions equally far from the diagonal tie exactly in
    fast_align's model, and which one wins then hangs on the last bit of sums that fast_align itself adds in an order
    that changes with its thread count (so no reference can call it)."""
    return [(list(dict.fromkeys(src)), list(dict.fromkeys(tgt))) for src, tgt in varied_corpus(n, seed)]


def run_align(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    align.add_arguments(parser)
    return align.run(parser.parse_args(list(argv)))


def _lines(path) -> list[str]:
    return open(path, encoding="utf-8").read().split("\n")[:-1]


def test_learning_run_and_its_saved_params_print_fast_align_training_links(tmp_path):
    """On 300 pairs of varied lengths (and a few literal <eps> tokens) the forward and reverse files equal, byte for
    byte, the links fast_align's training run prints (its last iteration, unpruned table, last tension); OUT is their
    grow-diag-final-and. Reusing the saved parameters (--params) gives the same three files byte for byte (it decoded
    the beam-pruned tables, as ``fast_align -f``, which gives other links on some lines). A folder without the unpruned
    tables (as saved before them) still loads and decodes its pruned tables: those other links."""
    pairs = distinct_word_corpus(300, seed=5)
    pairs += [(["e1", "<eps>", "e2"], ["f1", "f2"]), (["e3", "e4"], ["<eps>", "f4", "f3"])]
    src, tgt = tmp_path / "s.txt", tmp_path / "t.txt"
    src.write_text("".join(" ".join(s) + "\n" for s, _ in pairs), encoding="utf-8")
    tgt.write_text("".join(" ".join(t) + "\n" for _, t in pairs), encoding="utf-8")
    out, fwd, rev, params = (str(tmp_path / name) for name in ("o.txt", "f.txt", "r.txt", "params"))
    assert run_align("--src", str(src), "--tgt", str(tgt), "--out", out, "--forward", fwd, "--reverse", rev,
                     "--save-params", params) == 0

    expected_forward = fast_align_training_run(pairs)
    expected_reverse = fast_align_training_run(pairs, reverse=True)
    assert open(fwd, "rb").read() == "".join(line + "\n" for line in expected_forward).encode()
    assert open(rev, "rb").read() == "".join(line + "\n" for line in expected_reverse).encode()
    for (s, t), line, f_line, r_line in zip(pairs, _lines(out), expected_forward, expected_reverse):
        links = symmetrize(parse_pharaoh(f_line), parse_pharaoh(r_line), "grow-diag-final-and")
        assert line == " ".join(f"{i}-{j}" for i in range(len(s)) for j in range(len(t)) if (i, j) in links)

    def decode(folder, tag: str) -> list[str]:
        paths = [str(tmp_path / f"{name}-{tag}.txt") for name in ("o", "f", "r")]
        assert run_align("--src", str(src), "--tgt", str(tgt), "--out", paths[0], "--forward", paths[1],
                         "--reverse", paths[2], "--params", str(folder)) == 0
        return paths

    for learned, decoded in zip((out, fwd, rev), decode(params, "saved")):
        assert open(decoded, "rb").read() == open(learned, "rb").read()

    older = tmp_path / "older"  # the folder as saved before the unpruned tables were
    shutil.copytree(params, older)
    meta = json.loads((older / "fast_align_params.json").read_text())
    for name in ("forward.unpruned.npz", "reverse.unpruned.npz"):
        (older / name).unlink()
        del meta["files"][name]
    (older / "fast_align_params.json").write_text(json.dumps(meta))
    _, pruned_forward, pruned_reverse = decode(older, "older")
    differing = sum(a != b for a, b in zip(_lines(pruned_forward), expected_forward))
    differing += sum(a != b for a, b in zip(_lines(pruned_reverse), expected_reverse))
    assert differing >= 5, differing  # the pruned tables' links are not the training run's on some lines
