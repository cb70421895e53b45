"""Learn fast_align's parameters once (both directions): our deterministic EM, or fast_align in ``systran-align``.

``learner="interlingua"`` (default) runs :mod:`~interlingua.operators.align.fast_align_em`: fast_align's
EM with the E-step in process (``workers=1``) or sharded over Ray actors
(:mod:`~interlingua.operators.align.distributed_em`); the same input and worker count give the same
bytes on every run.

``learner="systran"``: ``systran_align.generate_alignment_probabilities`` runs fast_align's EM for the forward model
(t(target | source)) and then the reverse one, and writes each lexical table to a binary file. It
does not save the diagonal tension it optimized, which directional decoding needs, so training runs
with fast_align's verbose log captured (the C++ code writes it to file descriptor 2) and the last
``final tension:`` reported before each table is written is the tension that direction used.

The learned parameters live in a directory (any fsspec URL once written)::

    fast_align_params.json   settings, learner, the two tensions, and the SHA-256 and size of each .npz (checked
                             when the folder is loaded: :mod:`~interlingua.operators.align.parameter_files`)
    forward.npz, reverse.npz lexical tables for :class:`~interlingua.operators.align.lexical_table.LexicalTable`
                             (plain arrays, read without unpickling): beam-pruned as ``fast_align -p`` writes them
    forward.unpruned.npz,    (interlingua learner) every entry at full precision, deflated: the tables fast_align's
    reverse.unpruned.npz     training run prints its links from; loading decodes with these when the record names them
                             (unless asked for the pruned ones: ``load(directory, tables="pruned")``)
    forward.bin, reverse.bin systran-align's format (for ``systran_align.Aligner``)
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from interlingua.operators.align.fast_align_decoder import DirectionalModel
from interlingua.operators.align.lexical_table import LexicalTable, read_systran_table
from interlingua.operators.align.parameter_files import (FILES_KEY, ParametersError, file_records, join_path,
                                                         read_meta, read_recorded, require_positive_number)

PARAMS_FILE = "fast_align_params.json"
LEARNERS = ("interlingua", "systran")
#: fast_align separates source and target with this token; a token spelled so is renamed.
SEPARATOR = "|||"
SEPARATOR_STAND_IN = "<|||>"
#: Each direction's unpruned table in the folder (the interlingua learner writes them; systran's has none).
UNPRUNED_FILES = {"forward": "forward.unpruned.npz", "reverse": "reverse.unpruned.npz"}
#: The tables :meth:`FastAlignParameters.load` can decode with.
TABLES = ("unpruned", "pruned")


@dataclass(frozen=True)
class FastAlignSettings:
    """fast_align's training options (defaults: the recommended ``-d -o -v``, 5 iterations)."""

    iterations: int = 5
    favor_diagonal: bool = True
    optimize_tension: bool = True
    variational_bayes: bool = True
    diagonal_tension: float = 4.0
    prob_align_null: float = 0.08
    alpha: float = 0.01
    no_null_word: bool = False

    def __post_init__(self) -> None:
        if self.iterations < 1:
            raise ValueError(f"iterations must be >= 1, got {self.iterations}")
        if not self.diagonal_tension > 0:
            raise ValueError(f"diagonal_tension must be > 0, got {self.diagonal_tension}")
        if not 0.0 <= self.prob_align_null < 1.0:
            raise ValueError(f"prob_align_null must be in [0, 1), got {self.prob_align_null}")
        if self.variational_bayes and not self.alpha > 0:
            raise ValueError(f"alpha must be > 0 with variational_bayes, got {self.alpha}")


@dataclass(frozen=True)
class FastAlignParameters:
    """Both learned directions, ready to decode."""

    forward: DirectionalModel
    reverse: DirectionalModel
    settings: FastAlignSettings
    #: Just after learning (interlingua learner): both directions with every table entry at full precision and the
    #: final tensions, the model fast_align's training run (``fast_align -i corpus -d -o -v``) prints its links from in
    #: its last iteration; ``forward`` / ``reverse`` are then the beam-pruned tables of ``fast_align -p``, with which
    #: (as ``fast_align -f`` does) some lines get other links. Both are saved; :meth:`load` gives the unpruned ones.
    unpruned: FastAlignParameters | None = None

    @classmethod
    def load(cls, directory: str, tables: str | None = None) -> FastAlignParameters:
        """The model to decode with from what :func:`learn_fast_align` saved in ``directory`` (local path or fsspec
        URL). ``tables``: ``None`` (default) the unpruned tables when the folder's record names them (so its links are
        the training run's), else the pruned ones (folders written before, and systran's learner: ``fast_align -f``'s
        links); ``"pruned"`` the beam-pruned ones (the entries of ``forward.bin`` / ``reverse.bin``);
        ``"unpruned"`` the unpruned ones, a folder without them refused. A folder that is not one, or whose JSON or
        tables are damaged, edited or swapped (each recorded table, used or not, is checked against its SHA-256), is a
        :class:`~interlingua.operators.align.parameter_files.ParametersError`."""
        if tables not in (None, *TABLES):
            raise ValueError(f"tables {tables!r} is not supported; expected one of {', '.join(TABLES)}")
        where = join_path(directory, PARAMS_FILE)
        meta = read_meta(directory, PARAMS_FILE, "fast_align")
        try:
            settings = FastAlignSettings(**meta["settings"])
        except (KeyError, TypeError, ValueError) as err:
            raise ParametersError(f"{where}: no valid fast_align settings ({type(err).__name__}: {err}); learn the "
                                  "parameters again (--save-params)") from None
        kept = any(name in meta.get(FILES_KEY, {}) for name in UNPRUNED_FILES.values())
        if tables == "unpruned" and not kept:
            raise ParametersError(f"{where} records no unpruned tables (learned by --learner systran, or saved before "
                                  "they were kept): load its pruned tables, or learn the parameters again")
        models = []
        for name in ("forward", "reverse"):
            tension = require_positive_number(meta, f"{name}_tension", where)
            data = {f"{name}.npz": read_recorded(directory, f"{name}.npz", meta)}
            if kept:
                data[UNPRUNED_FILES[name]] = read_recorded(directory, UNPRUNED_FILES[name], meta)
            file = UNPRUNED_FILES[name] if kept and tables != "pruned" else f"{name}.npz"
            try:
                table = LexicalTable.load_npz(join_path(directory, file), data[file])
            except ValueError as err:
                raise ParametersError(f"{err} (learn the parameters again: --save-params)") from None
            models.append(_directional(table, tension, settings))
        return cls(forward=models[0], reverse=models[1], settings=settings)


def fast_align_token(token: str) -> str:
    """The spelling a token gets in fast_align's input (only the separator is renamed)."""
    return SEPARATOR_STAND_IN if token == SEPARATOR else token


def learn_fast_align(
    pairs: Iterable[tuple[Sequence[str], Sequence[str]]],
    directory: str,
    settings: FastAlignSettings = FastAlignSettings(),
    learner: str = "interlingua",
    workers: int = 1,
    progress=None,
) -> FastAlignParameters:
    """Train both directions on tokenized ``pairs`` and save them in local ``directory``.

    Pairs with an empty side are skipped (fast_align cannot train on them). Raises ``ValueError``
    when no pair has two non-empty sides. ``workers`` > 1 (interlingua learner) shards the E-step
    over that many Ray actors (Ray must be initialized); ``progress`` gets one line per iteration.
    The interlingua learner saves and returns the unpruned tables too (:attr:`FastAlignParameters.unpruned`; the
    systran learner has only the pruned tables it wrote: ``None`` there).
    """
    if learner not in LEARNERS:
        raise ValueError(f"learner {learner!r} is not supported; expected one of {', '.join(LEARNERS)}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    os.makedirs(directory, exist_ok=True)
    if learner == "interlingua":
        return _learn_interlingua(pairs, directory, settings, workers, progress)
    return _learn_systran(pairs, directory, settings)


def _learn_interlingua(pairs, directory: str, settings: FastAlignSettings, workers: int, progress) -> FastAlignParameters:
    from interlingua.operators.align.fast_align_em import InProcessExecutor, encode_corpus, learn_tables

    corpus = encode_corpus(([fast_align_token(t) for t in src], [fast_align_token(t) for t in tgt])
                           for src, tgt in pairs if len(src) and len(tgt))
    if corpus.pairs == 0:
        raise ValueError("no sentence pair with two non-empty sides to learn fast_align parameters from")
    if workers == 1:
        executor = InProcessExecutor(corpus)
        learned = learn_tables(corpus, settings, executor, progress, unpruned=True)
    else:
        from interlingua.operators.align.distributed_em import RayExecutor

        executor = RayExecutor(corpus, workers, settings)
        try:
            learned = learn_tables(corpus, settings, executor, progress, unpruned=True)
        finally:
            executor.close()
    # not the worker count: the parameters are the same for any (the E-step's sums are combined in a fixed order),
    # so the file, and the corpus version holding it, must be too
    saved = save_parameters(directory, learned.forward, learned.reverse, learned.forward_tension, learned.reverse_tension,
                            settings, {"learner": "interlingua", "pairs": corpus.pairs, "log": learned.log},
                            unpruned=(learned.unpruned_forward, learned.unpruned_reverse))
    unpruned = FastAlignParameters(_directional(learned.unpruned_forward, learned.forward_tension, settings),
                                   _directional(learned.unpruned_reverse, learned.reverse_tension, settings), settings)
    return dataclasses.replace(saved, unpruned=unpruned)


def save_parameters(directory: str, forward: LexicalTable, reverse: LexicalTable, forward_tension: float, reverse_tension: float,
                    settings: FastAlignSettings, extra: dict, write_bin: bool = True,
                    unpruned: tuple[LexicalTable, LexicalTable] | None = None) -> FastAlignParameters:
    """Write both tables (npz, and with ``write_bin`` systran-align's format), with ``unpruned`` (forward, reverse)
    also those (:data:`UNPRUNED_FILES`, deflated), and ``fast_align_params.json`` recording each npz."""
    from interlingua.operators.align.lexical_table import write_systran_table

    for name, table in (("forward", forward), ("reverse", reverse)):
        table.save_npz(os.path.join(directory, f"{name}.npz"))
        if write_bin:
            write_systran_table(table, os.path.join(directory, f"{name}.bin"))
    names = ["forward.npz", "reverse.npz"]
    if unpruned is not None:
        for name, table in zip(("forward", "reverse"), unpruned):
            table.save_npz(os.path.join(directory, UNPRUNED_FILES[name]), compressed=True)
            names.append(UNPRUNED_FILES[name])
    meta = {"settings": asdict(settings), "forward_tension": forward_tension, "reverse_tension": reverse_tension, **extra,
            FILES_KEY: file_records(directory, names)}
    with open(os.path.join(directory, PARAMS_FILE), "w", encoding="utf-8") as handle:
        json.dump(meta, handle, indent=2)
    return FastAlignParameters(
        _directional(forward, forward_tension, settings), _directional(reverse, reverse_tension, settings), settings
    )


def _learn_systran(pairs, directory: str, settings: FastAlignSettings) -> FastAlignParameters:
    import systran_align

    corpus_path = os.path.join(directory, "training_corpus.txt")
    with open(corpus_path, "w", encoding="utf-8") as corpus:
        written = 0
        for src, tgt in pairs:
            if len(src) and len(tgt):
                corpus.write(" ".join(map(fast_align_token, src)) + " ||| " + " ".join(map(fast_align_token, tgt)) + "\n")
                written += 1
    if written == 0:
        raise ValueError("no sentence pair with two non-empty sides to learn fast_align parameters from")
    forward_bin, reverse_bin = os.path.join(directory, "forward.bin"), os.path.join(directory, "reverse.bin")
    # fast_align's verbose log goes next to the corpus in ``directory`` (never the system temp folder) and
    # both leave it whether learning succeeds or fails; a failure carries the log's tail instead.
    log_path = os.path.join(directory, "fast_align_log.txt")
    try:
        with _captured_stderr(log_path):
            try:
                systran_align.generate_alignment_probabilities(
                    corpus_path,
                    forward_bin,
                    reverse_bin,
                    verbose=True,
                    iterations=settings.iterations,
                    favor_diagonal=settings.favor_diagonal,
                    diagonal_tension=settings.diagonal_tension,
                    optimize_tension=settings.optimize_tension,
                    variational_bayes=settings.variational_bayes,
                    alpha=settings.alpha,
                    no_null_word=settings.no_null_word,
                    prob_align_null=settings.prob_align_null,
                )
            except Exception as error:
                failure = error
            else:
                failure = None
        with open(log_path, encoding="utf-8", errors="replace") as handle:
            log = handle.read()
    finally:
        for leftover in (log_path, corpus_path):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)
    if failure is not None:
        tail = "\n".join(log.strip().splitlines()[-5:])
        raise RuntimeError(f"systran-align's fast_align failed: {failure}" + (f"; its log ends:\n{tail}" if tail else "")) from failure
    forward_tension, reverse_tension = learned_tensions(log, settings.diagonal_tension, forward_bin, reverse_bin)
    forward_table, reverse_table = read_systran_table(forward_bin), read_systran_table(reverse_bin)
    if settings.iterations == 1:  # never normalized: the files hold zeroed counts, fast_align's t(f | e) is 1e-9
        forward_table = LexicalTable.uninitialized(forward_table.vocabulary)
        reverse_table = LexicalTable.uninitialized(reverse_table.vocabulary)
    return save_parameters(directory, forward_table, reverse_table, forward_tension, reverse_tension, settings,
                           {"learner": "systran", "pairs": written}, write_bin=False)


def learned_tensions(log: str, initial: float, forward_path: str, reverse_path: str) -> tuple[float, float]:
    """The tension each direction ended with, from fast_align's verbose log.

    The log has one block per direction ending with ``conditional probabilities: <path>``; a block
    without ``final tension:`` lines (tension not optimized) keeps ``initial``.
    """
    tensions: dict[str, float] = {}
    current = initial
    for line in log.splitlines():
        found = re.search(r"final tension:\s*([0-9.eE+-]+)", line)
        if found:
            current = float(found.group(1))
        written = re.search(r"conditional probabilities:\s*(.+?)\s*$", line)
        if written:
            tensions[written.group(1)] = current
            current = initial
    missing = [p for p in (forward_path, reverse_path) if p not in tensions]
    if missing:
        raise RuntimeError(f"fast_align's log does not report writing {missing}; cannot recover the learned tension")
    return tensions[forward_path], tensions[reverse_path]


def _directional(table: LexicalTable, tension: float, settings: FastAlignSettings) -> DirectionalModel:
    return DirectionalModel(
        table=table,
        tension=tension,
        favor_diagonal=settings.favor_diagonal,
        prob_align_null=settings.prob_align_null,
        use_null=not settings.no_null_word,
    )


class _captured_stderr:
    """Redirect file descriptor 2 (where C++ ``std::cerr`` writes) to the file at ``path``."""

    def __init__(self, path: str):
        self.path = path

    def __enter__(self) -> str:
        handle = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self.saved = os.dup(2)
        os.dup2(handle, 2)
        os.close(handle)
        return self.path

    def __exit__(self, *exc) -> None:
        os.dup2(self.saved, 2)
        os.close(self.saved)


def copy_parameters(source: str, destination: str) -> None:
    """Copy a local parameters directory (e.g. into a corpus version)."""
    shutil.copytree(source, destination, dirs_exist_ok=True)
