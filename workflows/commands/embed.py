"""``interlingua embed --model URI "text" ...``: sentence vectors from any encoder."""

from __future__ import annotations

import argparse
import sys

from interlingua.core.argument_types import positive_int

HELP = "embed sentences with an encoder (HF id, folder, fsspec URL or models:/NAME@ALIAS)"
DESCRIPTION = (HELP + ". Any encoder `interlingua eval` takes: a sentence-transformers stack with a Dense head, a "
               "meaning-head or combined encoder, MODE(A|B), py:module:factory.")
#: ``embed A --input F B``: argparse takes the sentences as one run of words, so B is left over.
UNRECOGNIZED_HINT = "give the sentences together, before or after the options, e.g. embed --model M A B --input F"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("texts", nargs="*", help="sentences to embed (or use --input)")
    parser.add_argument("--model", required=True,
                        help="encoder: models:/NAME@ALIAS, a local folder, an fsspec URL or a Hugging Face id")
    parser.add_argument("--input", help="text file, one sentence per line ('-' for stdin)")
    parser.add_argument("--out", help="write vectors to this .npy file instead of printing them")
    parser.add_argument("--batch-size", type=positive_int, default=32,
                        help="sentences encoded at a time (default %(default)s)")
    parser.add_argument("--no-normalize", action="store_true",
                        help="skip the extra L2 normalization (a model ending in a Normalize module stays unit length)")
    parser.add_argument("--similarity", action="store_true", help="also print the cosine similarity matrix")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from interlingua.core.errors import UserError

    texts = list(args.texts)
    for k, text in enumerate(texts, 1):  # undecodable bytes reach argv as lone surrogates
        if any("\udc80" <= char <= "\udcff" for char in text):
            raise UserError(f"sentence argument {k} is not UTF-8 text (hint: convert it, e.g. with iconv)")
    if args.input:
        if args.input != "-" and not Path(args.input).is_file():
            raise UserError(f"--input {args.input}: no such file (one sentence per line, or '-' for stdin)")
        stream = _utf8_stdin() if args.input == "-" else open(args.input, encoding="utf-8")
        with stream:
            try:
                texts.extend(line.rstrip("\n") for line in stream)
            except UnicodeDecodeError as err:
                raise UserError(f"--input {args.input}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    if not texts:
        raise UserError("no texts given: pass sentences as arguments or --input FILE")
    from interlingua.workflows.commands.output_files import writable_output_files

    # checked before the model loads; a folder made for it goes if the run fails
    with writable_output_files({"--out": args.out} if args.out else {}):
        return _embed(args, texts)


def _embed(args: argparse.Namespace, texts: list[str]) -> int:
    """Print ``texts``' vectors, or write them to ``--out``."""
    import numpy as np

    from interlingua.core.errors import UserError
    from interlingua.models.encode import encode_texts
    from interlingua.models.resolve import check_registered_uris, resolve_encoder

    if "models:/" in args.model or "runs:/" in args.model:
        from interlingua.core.runtime import use_tracking_store

        check_registered_uris(args.model)  # a models:/ URI of neither form: one line before the server is probed
        use_tracking_store()
    try:
        encoder = resolve_encoder(args.model)  # every module of a stack runs (a Dense head, a meaning head)
    except ValueError as err:
        raise UserError(str(err)) from None
    vectors = encode_texts(encoder, texts, batch_size=args.batch_size, normalize=not args.no_normalize)
    if args.out:
        with open(args.out, "wb") as handle:  # np.save(path) would add ".npy" to a name without it
            np.save(handle, vectors, allow_pickle=False)
        blank = sum(1 for text in texts if not text.strip())
        note = f" ({blank} blank line(s) embedded as empty text, so rows stay line-aligned)" if blank else ""
        print(f"wrote {vectors.shape[0]} x {vectors.shape[1]} vectors to {args.out}{note}")
    else:
        np.set_printoptions(precision=5, suppress=True, linewidth=160, threshold=8)
        for text, vec in zip(texts, vectors):
            print(f"{text}\t{np.array2string(vec, separator=' ')}")
    if args.similarity:
        normed = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        sims = normed @ normed.T
        print("cosine similarity:")
        for i, row in enumerate(sims):
            print(f"  [{i}] " + " ".join(f"{v:+.3f}" for v in row))
    return 0


def _utf8_stdin():
    """Standard input decoded as UTF-8, strictly (the locale's decoding lets bad bytes through as surrogates)."""
    import io

    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # already text (a test's StringIO)
        return sys.stdin
    return io.TextIOWrapper(buffer, encoding="utf-8", errors="strict")
