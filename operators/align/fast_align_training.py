"""Learn fast_align's parameters once (both directions) with the real fast_align in ``systran-align``.

``systran_align.generate_alignment_probabilities`` runs fast_align's EM for the forward model
(t(target | source)) and then the reverse one, and writes each lexical table to a binary file. It
does not save the diagonal tension it optimized, which directional decoding needs, so training runs
with fast_align's verbose log captured (the C++ code writes it to file descriptor 2) and the last
``final tension:`` reported before each table is written is the tension that direction used.

The learned parameters live in a directory (any fsspec URL once written)::

    fast_align_params.json   settings and the two tensions
    forward.npz, reverse.npz lexical tables for :class:`~interlingua.operators.align.lexical_table.LexicalTable`
    forward.bin, reverse.bin systran-align's own files (for ``systran_align.Aligner``)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from interlingua.operators.align.fast_align_decoder import DirectionalModel
from interlingua.operators.align.lexical_table import LexicalTable, read_systran_table

PARAMS_FILE = "fast_align_params.json"
#: fast_align separates source and target with this token; a token spelled so is renamed.
SEPARATOR = "|||"
SEPARATOR_STAND_IN = "<|||>"


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

    @classmethod
    def load(cls, directory: str) -> FastAlignParameters:
        """Load what :func:`learn_fast_align` saved in ``directory`` (local path or fsspec URL)."""
        import fsspec

        with fsspec.open(_join(directory, PARAMS_FILE), "r") as handle:
            meta = json.load(handle)
        settings = FastAlignSettings(**meta["settings"])
        return cls(
            forward=_directional(LexicalTable.load_npz(_join(directory, "forward.npz")), meta["forward_tension"], settings),
            reverse=_directional(LexicalTable.load_npz(_join(directory, "reverse.npz")), meta["reverse_tension"], settings),
            settings=settings,
        )


def fast_align_token(token: str) -> str:
    """The spelling a token gets in fast_align's input (only the separator is renamed)."""
    return SEPARATOR_STAND_IN if token == SEPARATOR else token


def learn_fast_align(
    pairs: Iterable[tuple[Sequence[str], Sequence[str]]],
    directory: str,
    settings: FastAlignSettings = FastAlignSettings(),
) -> FastAlignParameters:
    """Train both directions on tokenized ``pairs`` and save them in local ``directory``.

    Pairs with an empty side are skipped (fast_align cannot train on them). Raises ``ValueError``
    when no pair has two non-empty sides.
    """
    import systran_align

    os.makedirs(directory, exist_ok=True)
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
    with _captured_stderr() as log_path:
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
    with open(log_path, encoding="utf-8", errors="replace") as handle:
        log = handle.read()
    os.unlink(log_path)
    os.unlink(corpus_path)
    forward_tension, reverse_tension = learned_tensions(log, settings.diagonal_tension, forward_bin, reverse_bin)
    forward_table, reverse_table = read_systran_table(forward_bin), read_systran_table(reverse_bin)
    forward_table.save_npz(os.path.join(directory, "forward.npz"))
    reverse_table.save_npz(os.path.join(directory, "reverse.npz"))
    meta = {"settings": asdict(settings), "forward_tension": forward_tension, "reverse_tension": reverse_tension, "pairs": written}
    with open(os.path.join(directory, PARAMS_FILE), "w", encoding="utf-8") as handle:
        json.dump(meta, handle, indent=2)
    return FastAlignParameters(
        _directional(forward_table, forward_tension, settings), _directional(reverse_table, reverse_tension, settings), settings
    )


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
    """Redirect file descriptor 2 (where C++ ``std::cerr`` writes) to a temporary file."""

    def __enter__(self) -> str:
        handle, self.path = tempfile.mkstemp(prefix="fast_align_log_", suffix=".txt")
        self.saved = os.dup(2)
        os.dup2(handle, 2)
        os.close(handle)
        return self.path

    def __exit__(self, *exc) -> None:
        os.dup2(self.saved, 2)
        os.close(self.saved)


def _join(directory: str, name: str) -> str:
    return directory.rstrip("/") + "/" + name


def copy_parameters(source: str, destination: str) -> None:
    """Copy a local parameters directory (e.g. into a corpus version)."""
    shutil.copytree(source, destination, dirs_exist_ok=True)
