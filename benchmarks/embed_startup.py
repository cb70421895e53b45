"""Cold start of ``interlingua embed`` on 3 sentences: wall time of a new process, against the same work
done with plain sentence-transformers in a new process, interleaved round by round.

    python -m interlingua.benchmarks.embed_startup [--model .interlingua/assets/e5-small] [--rounds 5]
        [--before-python ../other-checkout/.venv/bin/python]

Prints the median wall seconds of each, their ratio with its spread, and one in-process breakdown
(imports, tokenizer, weights, encoding). "Cold" means a new Python process; the OS page cache stays warm,
as it is for a user running the command twice.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from interlingua.benchmarks.arguments import BenchmarkParser, default_e5, e5_folder, positive_int
from interlingua.benchmarks.interleave import format_ratio, interleave

SENTENCES = ["The Lord is my shepherd.", "Jehová es mi pastor.", "The stock market fell."]

_BASELINE = """
import sys
from sentence_transformers import SentenceTransformer
model = SentenceTransformer(sys.argv[1], device="cpu", local_files_only=True)
model.encode(sys.argv[2:], normalize_embeddings=True)
"""

_BREAKDOWN = """
import json, sys, time
t0 = time.perf_counter()
import torch, transformers  # noqa: F401
from interlingua.models.sentence_encoder import SentenceEncoder
from interlingua.models.transformer_files import load_tokenizer, load_transformer
t1 = time.perf_counter()
tok = load_tokenizer(sys.argv[1])
t2 = time.perf_counter()
model = load_transformer(sys.argv[1])
t3 = time.perf_counter()
SentenceEncoder(model, tok).encode(sys.argv[2:])
t4 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "tokenizer": t2 - t1, "weights": t3 - t2, "encode": t4 - t3}))
"""


def _command(args: list[str]) -> None:
    proc = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args[:3])} ... failed:\n{proc.stderr[-2000:]}")


def main(argv: list[str] | None = None) -> int:
    parser = BenchmarkParser(__doc__)
    parser.add_argument("--model", type=e5_folder, default=default_e5(), help="encoder folder (default: the e5-small asset)")
    parser.add_argument("--rounds", type=positive_int, default=5)
    parser.add_argument("--before-python", help="also time `interlingua embed` run by this interpreter (e.g. another "
                        "checkout's .venv/bin/python: the code before a change), interleaved with the others")
    args = parser.parse_args(argv)
    cli = [sys.executable, "-m", "interlingua.workflows.cli", "embed", "--model", args.model, *SENTENCES]
    baseline = [sys.executable, "-c", _BASELINE, args.model, *SENTENCES]
    runs = {"sentence-transformers": lambda: _command(baseline), "interlingua embed": lambda: _command(cli)}
    if args.before_python:
        before = [args.before_python, *cli[1:3], "embed", "--model", str(Path(args.model).resolve()), *SENTENCES]
        runs["interlingua embed, before"] = lambda: _command(before)
    seconds = interleave(runs, rounds=args.rounds, warmup=True)
    out = subprocess.run([sys.executable, "-c", _BREAKDOWN, args.model, *SENTENCES], capture_output=True, text=True)
    import json

    phases = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else {}
    print(f"cold start, 3 sentences, {args.rounds} interleaved rounds ({time.strftime('%Y-%m-%d %H:%M')})")
    print(f"{'run':<24} {'median s':>9} {'min s':>7} {'max s':>7}")
    for name, values in seconds.items():
        print(f"{name:<24} {statistics.median(values):>9.2f} {min(values):>7.2f} {max(values):>7.2f}")
    print(f"interlingua embed speed vs sentence-transformers: "
          f"{format_ratio(seconds['sentence-transformers'], seconds['interlingua embed'])} (median, min-max)")
    if args.before_python:
        print(f"interlingua embed speed vs before: "
              f"{format_ratio(seconds['interlingua embed, before'], seconds['interlingua embed'])} (median, min-max)")
    if phases:
        print("one in-process breakdown (s): " + ", ".join(f"{k} {v:.2f}" for k, v in phases.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
