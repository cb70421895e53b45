"""``interlingua embed --model URI "text" ...``: sentence vectors from any encoder."""

from __future__ import annotations

import argparse
import sys

HELP = "embed sentences with an encoder (HF id, folder, fsspec URL or models:/NAME@ALIAS)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("texts", nargs="*", help="sentences to embed (or use --input)")
    parser.add_argument("--model", required=True,
                        help="encoder: models:/NAME@ALIAS, a local folder, an fsspec URL or a Hugging Face id")
    parser.add_argument("--input", help="text file, one sentence per line ('-' for stdin)")
    parser.add_argument("--out", help="write vectors to this .npy file instead of printing them")
    parser.add_argument("--batch-size", type=_positive_int, default=32)
    parser.add_argument("--no-normalize", action="store_true", help="do not L2-normalize the vectors")
    parser.add_argument("--similarity", action="store_true", help="also print the cosine similarity matrix")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from interlingua.core.errors import UserError

    texts = list(args.texts)
    if args.input:
        if args.input != "-" and not Path(args.input).is_file():
            raise UserError(f"--input {args.input}: no such file (one sentence per line, or '-' for stdin)")
        stream = sys.stdin if args.input == "-" else open(args.input, encoding="utf-8")
        with stream:
            try:
                texts.extend(line.rstrip("\n") for line in stream)
            except UnicodeDecodeError as err:
                raise UserError(f"--input {args.input}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    if not texts:
        raise UserError("no texts given: pass sentences as arguments or --input FILE")
    if args.out and not Path(args.out).resolve().parent.is_dir():
        raise UserError(f"--out {args.out}: folder {Path(args.out).resolve().parent} does not exist")

    import numpy as np

    from interlingua.models.load import load_encoder

    if args.model.startswith(("models:/", "runs:/")):
        from interlingua.core.runtime import use_tracking_store

        use_tracking_store()
    encoder = load_encoder(args.model)
    vectors = encoder.encode(texts, batch_size=args.batch_size, normalize=not args.no_normalize)
    if args.out:
        np.save(args.out, vectors)
        print(f"wrote {vectors.shape[0]} x {vectors.shape[1]} vectors to {args.out}")
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
