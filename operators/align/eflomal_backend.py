"""eflomal (Östling & Tiedemann 2016, PyPI ``eflomal``) as a second word aligner.

eflomal samples alignments under a Bayesian IBM-style model (lexical, HMM jump and fertility
parameters) in both directions. Its parameters are not kept between runs; what carries over is a
*priors* file (lexical, jump and fertility counts from an alignment of a training corpus, eflomal's
own text format). As with fast_align, priors are learned once on the corpus
(:func:`learn_eflomal_priors`) and every shard is then aligned on its own with them
(:class:`EflomalAligner`), so new shards get the corpus's statistics. The directional links are
symmetrized with :func:`~interlingua.operators.align.symmetrize.symmetrize`, as fast_align's.

eflomal's sampler is randomized: two runs on the same input may give different links.

eflomal reads its text with ``str.split()``, which also splits at no-break and other Unicode spaces; our tokens
(fast_align's: split at spaces and tabs only) may hold those, so a token holding any is passed escaped
(:func:`eflomal_token`) and eflomal's indices are ours.

A priors directory holds ``eflomal_priors.txt`` and ``eflomal_params.json`` (written last, with the priors' SHA-256
and size, checked when an :class:`EflomalAligner` opens the folder).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable, Sequence

from interlingua.operators.align.parameter_files import FILES_KEY, ParametersError, file_records, read_meta, read_recorded
from interlingua.operators.align.pharaoh import format_pharaoh, parse_pharaoh
from interlingua.operators.align.symmetrize import SYMMETRIZATIONS, symmetrize

PRIORS_FILE = "eflomal_priors.txt"
PARAMS_FILE = "eflomal_params.json"
#: Most tokens a side of a pair may have: eflomal gives a sentence of 1,024 tokens or more no link at all, silently.
MAX_TOKENS = 1023
#: Introduces an escaped character in a token given to eflomal (a private-use character).
ESCAPE_MARK = "\ue000"
_ESCAPED = re.compile("[\\s\ue000]")  # what str.split() splits at (Unicode spaces), and the mark itself


def eflomal_token(token: str) -> str:
    """``token`` as eflomal gets it: each character ``str.split()`` would split it at, and :data:`ESCAPE_MARK`, replaced
    by the mark and its code point in 6 hex digits (distinct tokens stay distinct; any other token is unchanged)."""
    return _ESCAPED.sub(lambda found: f"{ESCAPE_MARK}{ord(found.group()):06x}", token)


def _eflomal_lines(sentences: Sequence[Sequence[str]]) -> list[str]:
    """One line per sentence, its tokens escaped (:func:`eflomal_token`) and joined by spaces."""
    return [" ".join(map(eflomal_token, sentence)) + "\n" for sentence in sentences]


def _run_eflomal(sources: Sequence[Sequence[str]], targets: Sequence[Sequence[str]], priors_path: str | None) -> tuple[list[str], list[str]]:
    """Forward and reverse Pharaoh lines (source-target order) of pairs with two non-empty sides of at most
    :data:`MAX_TOKENS` tokens (a longer side is a ``ValueError``: eflomal would give it no link)."""
    import eflomal

    for k, (source, target) in enumerate(zip(sources, targets)):
        if max(len(source), len(target)) > MAX_TOKENS:
            raise ValueError(f"pair {k} has a side of {max(len(source), len(target))} tokens; eflomal aligns at most "
                             f"{MAX_TOKENS} (it gives a longer sentence no link): reject longer pairs first")

    with tempfile.TemporaryDirectory(prefix="interlingua_eflomal_") as work:
        fwd, rev = os.path.join(work, "fwd"), os.path.join(work, "rev")
        aligner = eflomal.Aligner()
        src_lines, tgt_lines = _eflomal_lines(sources), _eflomal_lines(targets)
        if priors_path is None:
            aligner.align(src_lines, tgt_lines, links_filename_fwd=fwd, links_filename_rev=rev, quiet=True)
        else:
            with open(priors_path, encoding="utf-8") as priors:
                aligner.align(src_lines, tgt_lines, links_filename_fwd=fwd, links_filename_rev=rev, priors_input=priors, quiet=True)
        with open(fwd, encoding="utf-8") as handle:
            forward = handle.read().split("\n")[: len(sources)]
        with open(rev, encoding="utf-8") as handle:
            reverse = handle.read().split("\n")[: len(sources)]
    if len(forward) != len(sources) or len(reverse) != len(sources):
        raise RuntimeError(f"eflomal returned {len(forward)} / {len(reverse)} alignments for {len(sources)} pairs")
    return forward, reverse


def learn_eflomal_priors(pairs: Iterable[tuple[Sequence[str], Sequence[str]]], directory: str) -> int:
    """Align ``pairs`` (empty sides skipped) without priors, write the priors they give; returns the pair count."""
    import eflomal

    kept = [(list(s), list(t)) for s, t in pairs if len(s) and len(t)]
    if not kept:
        raise ValueError("no sentence pair with two non-empty sides to learn eflomal priors from")
    sources, targets = [s for s, _ in kept], [t for _, t in kept]
    forward, reverse = _run_eflomal(sources, targets, None)
    os.makedirs(directory, exist_ok=True)
    priors = eflomal.calculate_priors(_eflomal_lines(sources), _eflomal_lines(targets), forward, reverse)
    with open(os.path.join(directory, PRIORS_FILE), "w", encoding="utf-8") as handle:
        eflomal.write_priors(handle, *priors)
    with open(os.path.join(directory, PARAMS_FILE), "w", encoding="utf-8") as handle:
        json.dump({"aligner": "eflomal", "pairs": len(kept), FILES_KEY: file_records(directory, [PRIORS_FILE])},
                  handle, indent=2)
    return len(kept)


class EflomalAligner:
    """eflomal both ways with saved priors, then ``symmetrization``; same outputs as ``BidirectionalAligner``."""

    def __init__(self, directory: str, symmetrization: str = "grow-diag-final-and"):
        if symmetrization not in SYMMETRIZATIONS:
            raise ValueError(f"symmetrization {symmetrization!r} is not supported; expected one of {', '.join(SYMMETRIZATIONS)}")
        self.priors_path = os.path.join(directory, PRIORS_FILE)
        if not os.path.exists(self.priors_path):
            raise FileNotFoundError(f"{directory} has no {PRIORS_FILE} (learn priors with learn_eflomal_priors)")
        meta = read_meta(directory, PARAMS_FILE, "eflomal")
        if meta.get("aligner") != "eflomal":
            raise ParametersError(f"{os.path.join(directory, PARAMS_FILE)} names aligner {meta.get('aligner')!r}, not "
                                  "'eflomal'")
        read_recorded(directory, PRIORS_FILE, meta)  # the priors its record names (damaged or swapped: refused)
        self.symmetrization = symmetrization

    def align_pharaoh(self, sources: Sequence[Sequence[str]], targets: Sequence[Sequence[str]]) -> tuple[list[str], list[str], list[str]]:
        """Forward, reverse and symmetrized Pharaoh strings, one per pair (empty for a pair with an empty side)."""
        if len(sources) != len(targets):
            raise ValueError(f"sources has {len(sources)} sentences but targets has {len(targets)}")
        forward, reverse, symmetrized = [""] * len(sources), [""] * len(sources), [""] * len(sources)
        keep = [k for k, (s, t) in enumerate(zip(sources, targets)) if len(s) and len(t)]
        if keep:
            fwd, rev = _run_eflomal([sources[k] for k in keep], [targets[k] for k in keep], self.priors_path)
            for k, f, r in zip(keep, fwd, rev):
                f_links, r_links = parse_pharaoh(f), parse_pharaoh(r)
                forward[k], reverse[k] = format_pharaoh(f_links, by_target=True), format_pharaoh(r_links)
                symmetrized[k] = format_pharaoh(symmetrize(f_links, r_links, self.symmetrization))
        return forward, reverse, symmetrized
