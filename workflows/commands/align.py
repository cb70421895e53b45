"""``interlingua align``: word-align two plain-text files with fast_align both ways + symmetrization."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from interlingua.core.errors import UserError

HELP = "word-align a source and a target text file (fast_align or eflomal, forward + reverse, symmetrized)"

DESCRIPTION = """\
Word-align SRC and TGT (one sentence per line, line N of one the translation of line N of the
other) with fast_align: parameters are learned once on the input (diagonal favouring, optimized
tension, variational Bayes), both directions are decoded, and the two directional alignments are
symmetrized (default grow-diag-final-and, atools semantics). Parameters are learned by our
deterministic fast_align EM (--learner interlingua; the same input gives the same parameters on every
run, its E-step on --workers Ray actors) or by systran-align's fast_align (--learner systran).
--aligner eflomal aligns with eflomal instead: priors learned once on the input (or read from
--params), then both directions sampled with them and symmetrized the same way (eflomal's sampler
is seeded from its input: the same lines give the same links, on one worker or several).

A run that learns fast_align's parameters (--learner interlingua, no --params) decodes with the
unpruned, full-precision tables and final tensions it learned, as fast_align's training run
(fast_align -i corpus -d -o -v) prints its links; --save-params keeps those tables too, so
--params DIR gives the same links. A folder without them (saved before, or by --learner systran)
decodes its beam-pruned tables, as fast_align -f does (on many lines other links).

OUT has exactly one line per input line, so line numbers stay aligned: Pharaoh links "i-j"
(0-based source token i, target token j). An empty input line gives an empty output line. A line
that is rejected (longer than --max-length tokens, not valid UTF-8, or a token holding a NUL
character) also gives an empty output line, and a JSON record in the rejects file (line number,
side, reason; byte offset for invalid UTF-8 and NUL). Source and target with different line counts are an error.

Tokens are separated by spaces and tabs by default (input already tokenized, split as fast_align
splits it: a no-break or other Unicode space is part of a token);
--tokenize moses tokenizes with Moses rules and writes the tokens to OUT.src.tok / OUT.tgt.tok so
link indices can be read against them."""


#: Same names as interlingua.operators.align.symmetrize.SYMMETRIZATIONS (a test keeps them equal);
#: spelled here so that building the parser imports nothing but the standard library.
SYMMETRIZATIONS = ("intersect", "union", "grow-diag", "grow-diag-final", "grow-diag-final-and")
#: Same as interlingua.operators.align.fast_align_training.LEARNERS (a test keeps them equal).
LEARNERS = ("interlingua", "systran")
ALIGNERS = ("fast_align", "eflomal")
#: fast_align's default EM iterations (``FastAlignSettings.iterations``; a test keeps them equal).
FAST_ALIGN_ITERATIONS = 5


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--src", required=True, help="source text file, one sentence per line (fsspec URL)")
    parser.add_argument("--tgt", required=True, help="target text file, line for line with --src")
    parser.add_argument("--out", required=True, help="symmetrized Pharaoh alignments, one line per input line")
    parser.add_argument("--sym", default="grow-diag-final-and", choices=SYMMETRIZATIONS, help="symmetrization (default %(default)s)")
    parser.add_argument("--workers", type=int, default=1,
                        help="alignment workers: 1 aligns in this process; N > 1 runs N Ray actors (local Ray unless --address / RAY_ADDRESS)")
    parser.add_argument("--address", default=None, help="Ray cluster address (default: $RAY_ADDRESS, else a local Ray)")
    parser.add_argument("--iterations", type=int, default=None,
                        help=f"fast_align EM iterations (default {FAST_ALIGN_ITERATIONS}; eflomal sets its own from the corpus size)")
    parser.add_argument("--max-length", type=int, default=None,
                        help="reject a pair whose source or target has more tokens than this (default: no limit, as "
                             "fast_align; 1023, eflomal's limit, with --aligner eflomal, which takes at most that)")
    parser.add_argument("--rejects", default=None, help="JSON-lines reject records (default OUT.rejects.jsonl)")
    parser.add_argument("--forward", default=None, help="also write the forward (source->target) directional alignments here")
    parser.add_argument("--reverse", default=None, help="also write the reverse (target->source) directional alignments here")
    parser.add_argument("--tokenize", default="whitespace", choices=("whitespace", "moses"),
                        help="whitespace: input is already tokenized, split at spaces and tabs as fast_align splits it (default); "
                             "moses: tokenize with --src-lang / --tgt-lang")
    parser.add_argument("--src-lang", default=None, help="source language code, for --tokenize moses")
    parser.add_argument("--tgt-lang", default=None, help="target language code, for --tokenize moses")
    parser.add_argument("--params", default=None,
                        help="directory of learned fast_align parameters to reuse (skips learning)")
    parser.add_argument("--save-params", default=None, help="keep the learned parameters in this directory")
    parser.add_argument("--learn-sample", type=int, default=None,
                        help="learn parameters on the first N accepted pairs only (default: all)")
    parser.add_argument("--learner", default="interlingua", choices=LEARNERS,
                        help="fast_align parameter learning: interlingua (deterministic EM, E-step on --workers Ray actors "
                             "when > 1) or systran (systran-align's multithreaded fast_align; not reproducible) (default %(default)s)")
    parser.add_argument("--aligner", default="fast_align", choices=ALIGNERS,
                        help="fast_align (learned parameters, compiled decoder) or eflomal (priors saved with --save-params, "
                             "reused with --params) (default %(default)s)")


def run(args: argparse.Namespace) -> int:
    from interlingua.core.made_folders import folders_made_for
    from interlingua.workflows.commands.output_files import writable_output_files

    # checked before Ray starts and the alignment runs, not after; a folder made for them (or for --save-params,
    # made by its check) goes if the run fails while it is empty
    with folders_made_for([args.save_params] if args.save_params else []), writable_output_files(_output_files(args)):
        _validate(args)
        return _align(args)


def _align(args: argparse.Namespace) -> int:
    loaded = _loaded_params(args) if args.params else None  # read and checked here, once, before Ray starts
    from interlingua.core.runtime import state_tempdir
    from interlingua.operators.bitext.parallel_lines import LineCountMismatch, read_parallel_lines

    from interlingua.core.inputs import require_input_files

    require_input_files([args.src, args.tgt], "input")  # missing, a folder or 0 bytes: one line, as other commands
    try:
        lines = list(read_parallel_lines(args.src, args.tgt))
    except FileNotFoundError as err:
        raise UserError(f"cannot read input: {err}") from err
    except LineCountMismatch as err:
        raise UserError(str(err)) from err

    tokenize = _tokenizer(args)
    sources: list[list[str]] = []
    targets: list[list[str]] = []
    rejects: list[dict] = []
    empty = 0  # accepted lines with an empty side (aligned empty)
    for pair in lines:
        src_tokens, tgt_tokens = ([], []) if pair.reject else (tokenize(pair.src, "src"), tokenize(pair.tgt, "tgt"))
        reject = (pair.reject or _nul_reject(pair, src_tokens, tgt_tokens, args)
                  or _length_reject(pair.number, src_tokens, tgt_tokens, args))
        if reject:
            rejects.append(reject)
            src_tokens, tgt_tokens = [], []
        elif not src_tokens or not tgt_tokens:
            empty += 1
        sources.append(src_tokens)
        targets.append(tgt_tokens)

    trainable = [(s, t) for s, t in zip(sources, targets) if s and t]
    # Parameters learned without --save-params live in a private folder under <state>/tmp, removed when the
    # command ends (errors included): they hold the corpus vocabulary, which must not stay in the system temp.
    with contextlib.ExitStack() as cleanup:
        unpruned = None  # the in-memory model fast_align's training run decodes with, when learned here
        if args.params:
            parameters_dir = args.params
        elif not trainable:
            parameters_dir = None
        else:
            parameters_dir = args.save_params or cleanup.enter_context(state_tempdir("interlingua_align_params_"))
            sample = trainable[: args.learn_sample] if args.learn_sample else trainable
            unpruned = _learn(sample, parameters_dir, args)

        # fast_align's parameters in memory (learned here unpruned, or --params read): decoded as they are, by the
        # one worker or by every actor (Ray hands them over: no actor reads a file); else the folder is read
        held = unpruned if unpruned is not None else loaded
        if parameters_dir is None:
            forward = reverse = symmetrized = [""] * len(lines)
        elif args.workers == 1:
            forward, reverse, symmetrized = _one_aligner(held, parameters_dir, args).align_pharaoh(sources, targets)
        else:
            forward, reverse, symmetrized = _align_on_ray(parameters_dir, sources, targets, args, held)

    _write_lines(args.out, symmetrized)
    if args.forward:
        _write_lines(args.forward, forward)
    if args.reverse:
        _write_lines(args.reverse, reverse)
    if args.tokenize == "moses":
        _write_lines(args.out + ".src.tok", [" ".join(s) for s in sources])
        _write_lines(args.out + ".tgt.tok", [" ".join(t) for t in targets])
    rejects_path = args.rejects or args.out + ".rejects.jsonl"
    _write_lines(rejects_path, [json.dumps(r, ensure_ascii=False) for r in rejects])
    print(
        f"aligned {len(lines)} lines ({len(lines) - len(rejects)} accepted, {empty} empty kept with empty alignment, "
        f"{len(rejects)} rejected -> {rejects_path}); {args.sym} alignments in {args.out}",
        file=sys.stderr,
    )
    return 0


def _validate(args: argparse.Namespace) -> None:
    if args.workers < 1:
        raise UserError(f"--workers must be >= 1, got {args.workers}")
    if args.aligner == "eflomal" and args.iterations is not None:
        raise UserError("--iterations sets fast_align's EM iterations; eflomal chooses its own from the corpus size "
                        "(drop --iterations, or use --aligner fast_align)")
    if args.aligner == "eflomal" and args.learner != "interlingua":
        raise UserError(f"--learner {args.learner} learns fast_align's parameters; eflomal learns its own priors "
                        "(drop --learner, or use --aligner fast_align)")
    if args.params:
        learning = [option for option, given in (("--save-params", args.save_params is not None),
                                                 ("--iterations", args.iterations is not None),
                                                 ("--learn-sample", args.learn_sample is not None),
                                                 ("--learner", args.learner != "interlingua")) if given]
        if learning:
            raise UserError(f"{', '.join(learning)} {'applies' if len(learning) == 1 else 'apply'} to learning parameters, "
                            "which --params skips (drop it, or drop --params to learn on this input)")
    args.iterations = FAST_ALIGN_ITERATIONS if args.iterations is None else args.iterations
    if args.iterations < 1:
        raise UserError(f"--iterations must be >= 1, got {args.iterations}")
    if args.max_length is not None and args.max_length < 1:
        raise UserError(f"--max-length must be >= 1, got {args.max_length}")
    if args.aligner == "eflomal":
        from interlingua.operators.align.eflomal_backend import MAX_TOKENS

        if args.max_length is None:
            args.max_length = MAX_TOKENS
        elif args.max_length > MAX_TOKENS:
            raise UserError(f"--max-length {args.max_length} is above eflomal's {MAX_TOKENS} tokens per sentence (it gives "
                            f"a longer one no link): use --max-length {MAX_TOKENS} or less with --aligner eflomal")
    if args.learn_sample is not None and args.learn_sample < 1:
        raise UserError(f"--learn-sample must be >= 1, got {args.learn_sample}")
    if args.tokenize == "moses" and not (args.src_lang and args.tgt_lang):
        raise UserError("--tokenize moses needs --src-lang and --tgt-lang (language codes such as en, es, zh)")
    from interlingua.core.inputs import require_distinct_files, require_writable

    # it would overwrite an input, or mix two
    require_distinct_files({"--src": args.src, "--tgt": args.tgt}, _output_files(args))
    if args.save_params:
        require_writable(args.save_params, "--save-params folder")
    markers = {"fast_align": "fast_align_params.json", "eflomal": "eflomal_params.json"}
    if args.params and "://" not in args.params and not os.path.exists(os.path.join(args.params, markers[args.aligner])):
        other = next((a for a, m in markers.items() if a != args.aligner and os.path.exists(os.path.join(args.params, m))), None)
        hint = (f"it holds {other}'s parameters: use --aligner {other}" if other else
                "write one with --save-params")
        raise UserError(f"--params {args.params} does not contain {markers[args.aligner]} (--aligner {args.aligner}; "
                        f"{hint})")
    if args.aligner == "eflomal" and not (args.params and args.workers > 1 and args.address):
        from interlingua.operators.align.eflomal_backend import require_runnable

        require_runnable()  # eflomal runs on this machine (learning, one worker, local actors): not from a noexec folder


def _output_files(args: argparse.Namespace) -> dict[str, str]:
    """The files the run writes: option (or what it is) -> path."""
    outputs = {"--out": args.out, "--rejects": args.rejects or args.out + ".rejects.jsonl", "--forward": args.forward,
               "--reverse": args.reverse}
    if args.tokenize == "moses":
        outputs |= {"the source tokens": args.out + ".src.tok", "the target tokens": args.out + ".tgt.tok"}
    return {option: path for option, path in outputs.items() if path}


def _loaded_params(args: argparse.Namespace):
    """What ``--params`` holds, its files checked against their recorded SHA-256: fast_align's parameters
    (``FastAlignParameters``, decoded by the one worker or handed to the actors), eflomal's aligner (its priors checked
    here; each actor checks them again, as it hands them to its eflomal). A folder that is not one, or is damaged or
    edited, is one line."""
    from interlingua.operators.align.align_operator import load_aligner
    from interlingua.operators.align.fast_align_training import FastAlignParameters
    from interlingua.operators.align.parameter_files import ParametersError

    try:
        if args.aligner == "fast_align":
            return FastAlignParameters.load(args.params)
        return load_aligner(args.params, args.aligner, args.sym, unit_pairs=_unit_pairs())
    except (ParametersError, FileNotFoundError) as err:
        raise UserError(f"--params: {err}") from None


def _one_aligner(held, parameters_dir: str, args: argparse.Namespace):
    """The aligner of ``--workers 1``: of ``held`` (fast_align's parameters in memory, or eflomal's aligner of
    ``--params``), else of ``parameters_dir`` (read here)."""
    from interlingua.operators.align.align_operator import load_aligner
    from interlingua.operators.align.bidirectional_aligner import BidirectionalAligner
    from interlingua.operators.align.fast_align_training import FastAlignParameters

    if isinstance(held, FastAlignParameters):
        return BidirectionalAligner(held, args.sym)
    return held or load_aligner(parameters_dir, args.aligner, args.sym, unit_pairs=_unit_pairs())


def _tokenizer(args: argparse.Namespace):
    if args.tokenize == "whitespace":
        from interlingua.operators.align.tokens import split_tokens

        return lambda text, side: split_tokens(text)
    from interlingua.operators.text.moses_tokenizer import tokenize

    languages = {"src": args.src_lang, "tgt": args.tgt_lang}
    return lambda text, side: tokenize(text, languages[side])


def _nul_reject(pair, src_tokens: list[str], tgt_tokens: list[str], args: argparse.Namespace) -> dict | None:
    """A line whose tokens hold U+0000: fast_align's (systran-align's) parameter files end each word at a NUL byte, so
    such a word would corrupt them."""
    for side, text, tokens, path in (("src", pair.src, src_tokens, args.src), ("tgt", pair.tgt, tgt_tokens, args.tgt)):
        if any("\0" in token for token in tokens):
            at = len(text[:text.index("\0")].encode("utf-8"))
            return {"line": pair.number, "side": side, "file": path, "reason": "nul_character", "byte_offset_in_line": at,
                    "detail": f"{side} line {pair.number} holds a NUL character (U+0000) at byte {at} of the line: "
                              "fast_align's parameter files cannot hold it in a word"}
    return None


def _length_reject(number: int, src_tokens: list[str], tgt_tokens: list[str], args: argparse.Namespace) -> dict | None:
    max_length = args.max_length
    if max_length is None:
        return None
    for side, tokens, path in (("src", src_tokens, args.src), ("tgt", tgt_tokens, args.tgt)):
        if len(tokens) > max_length:
            return {
                "line": number,
                "side": side,
                "file": path,
                "reason": "too_long",
                "tokens": len(tokens),
                "detail": f"{side} line {number} has {len(tokens)} tokens, more than --max-length {max_length}",
            }
    return None


def _learn(sample, parameters_dir: str, args: argparse.Namespace):
    """Learn and save the parameters; returns the unpruned in-memory fast_align model (interlingua learner), else None.

    fast_align's training run (``fast_align -i corpus -d -o -v``) prints the links of its last iteration, decoded with
    the full table it holds (every entry, double precision) and the last tension; its ``-p`` file (and ours) keeps only
    the entries within its beam. Decoding the input that was just learned from the unpruned model gives fast_align's
    links; the folder keeps the unpruned tables too, so ``--params DIR`` gives the same links (a folder without them,
    written before or by ``--learner systran``, decodes its pruned tables, as ``fast_align -f`` does)."""
    if args.aligner == "eflomal":
        from interlingua.operators.align.eflomal_backend import learn_eflomal_priors

        learn_eflomal_priors(sample, parameters_dir)
        return None
    from interlingua.operators.align.fast_align_training import FastAlignSettings, learn_fast_align

    if args.learner == "interlingua" and args.workers > 1:
        from interlingua.core.runtime import init_ray

        init_ray(args.address, num_cpus=None if args.address else max(args.workers, 1))
    learned = learn_fast_align(sample, parameters_dir, FastAlignSettings(iterations=args.iterations), learner=args.learner,
                               workers=args.workers if args.learner == "interlingua" else 1)
    return learned.unpruned


def _align_on_ray(parameters_dir, sources, targets, args, held=None):
    """Align on ``--workers`` actors: fast_align's with ``held`` (its parameters in memory, put in Ray's object
    store once) when given, each actor reading ``parameters_dir`` otherwise."""
    import ray
    import ray.data

    from interlingua.operators.align.align_operator import AlignUnitsOperator, FastAlignOperator, pack_units
    from interlingua.operators.align.fast_align_training import FastAlignParameters
    from interlingua.operators.runner import run_operator
    from interlingua.core.runtime import init_ray

    init_ray(args.address, num_cpus=None if args.address else max(args.workers, 1))
    rows = [{"k": k, "src_tokens": " ".join(s), "tgt_tokens": " ".join(t)} for k, (s, t) in enumerate(zip(sources, targets))]
    operator, batch_size, options = FastAlignOperator, 1024, {}
    if args.aligner == "eflomal":  # lines k * unit .. sampled together, as one worker's aligner cuts them
        unit = _unit_pairs()
        operator, batch_size, rows = AlignUnitsOperator, None, pack_units(rows, lambda row: row["k"] // unit)
        options = {"unit_pairs": unit}
    ds = ray.data.from_items(rows, override_num_blocks=max(min(len(rows), args.workers * 4), 1))
    if isinstance(held, FastAlignParameters):
        # in the object store once, the operator gets the reference (``options`` holds it in this frame until the
        # output is read): as an argument the tables were pickled into the operator Ray Data ships (a UDF "too large"
        # above 100 MiB)
        options["parameters"] = ray.put(held)
    else:
        options["parameters_dir"] = os.path.abspath(parameters_dir)
    out = run_operator(ds, operator, {"symmetrization": args.sym, "aligner": args.aligner, **options},
                       concurrency=args.workers, batch_size=batch_size)
    forward, reverse, symmetrized = [""] * len(sources), [""] * len(sources), [""] * len(sources)
    for batch in out.iter_batches(batch_format="numpy", batch_size=4096):
        for k, f, r, s in zip(batch["k"], batch["forward"], batch["reverse"], batch["alignment"]):
            forward[int(k)], reverse[int(k)], symmetrized[int(k)] = str(f), str(r), str(s)
    return forward, reverse, symmetrized


def _unit_pairs() -> int:
    """Pairs per eflomal run (``eflomal_backend.UNIT_PAIRS``): the cut of the driver's units, of one worker's aligner
    and of the actors' is this one value."""
    from interlingua.operators.align.eflomal_backend import UNIT_PAIRS

    return UNIT_PAIRS


def _write_lines(path: str, lines: list[str]) -> None:
    import fsspec

    with fsspec.open(path, "w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(line + "\n")
