"""Largest contrastive batch under a fixed memory cap: plain (full-graph) training vs gradient caching.

Usage::

    python -m interlingua.benchmarks.gradcache_memory [--cap-mib 64] [--hidden 128] [--layers 2]
        [--seq-len 32] [--chunk ROWS] [--max-ratio 64] [--rounds 3] [--time-steps 2]
        [--plain-batch N --cached-batch M] [--quick]

A small random BERT encoder (mean pooling) is trained on random token ids with the translation
ranking loss (in-batch negatives, both directions), one optimizer-free forward/backward per trial.
Each trial runs in a forked child of the driver (which imports torch and transformers once, running no
op): it builds the model, warms up with one small step (so the
parameter gradients exist), resets the process's peak-RSS counter (``/proc/self/clear_refs``), runs
the step at the trial batch and reads the peak RSS growth over the post-warm-up RSS (``VmHWM`` -
``VmRSS``). glibc's mmap/trim thresholds are pinned (``mallopt``) so freed activations go back to the OS and the peak is
what the step needed. A trial *fits* when that growth is at most the cap.

Search: plain batch doubles from 2 pairs until it no longer fits, then bisects; cached batch
(``--chunk`` rows per encoder call, default: the plain maximum in rows) doubles from the plain maximum
until it no longer fits or reaches ``--max-ratio`` x the plain maximum, then bisects. ``--plain-batch`` /
``--cached-batch`` skip the searches on a busy machine (the batches found by an earlier run; each is
checked to fit, and a plain batch ~6% larger to go over the cap, else a warning).

Timing: the runs (plain at its maximum, cached at the plain maximum, cached at its own maximum, the
one-chunk phases) are interleaved round by round (``--rounds``, :mod:`interlingua.benchmarks.interleave`),
each in a fresh child. Every timed run covers about the same pairs: the cached run at its maximum times
``--time-steps`` steps, the runs at the plain maximum as many steps as hold as many pairs; a run's time per
pair is the mean over its steps. The report gives the median over rounds of the per-round time-per-sample
ratio to plain, with its min-max spread.

The floor: caching encodes every row twice (pass 1 without a graph, pass 2 with one), so its time per
sample cannot go below ``(F0 + F + B) / (F + B)`` times the plain step's, with F0 a forward without
autograd (pass 1 runs under ``inference_mode``), F a forward with the graph and B its backward, all
measured per row on one chunk in the same run (the median of repeats); with F0 = F this is the
``1 + F/(F+B)`` of the literature, printed too. The goal line compares the ratio at the cached
*maximum* (not at the equal batch) with the floor.

Breakdown: the timed steps run through hooks (``encode``, ``loss_fn``, ``backward``) that add up the
seconds of pass 1 (encoder calls under inference mode), the forwards with the graph, the backwards and
the loss forward; the rest of the step is the loss gradient, concatenation and random-state bookkeeping.
The table gives them per pair for each run, beside what the one-chunk phases predict for the cached step.

The loss couples the whole batch, but above 256 query rows it is computed block by block
(``trainers/objectives/blockwise_cross_entropy.py``), so what grows with the batch is linear (the
embeddings and their gradients), not the B x B logits; its time per pair still grows with the batch (each
row meets every other), which is the part of the cached step the floor leaves out. The report gives the
share of the cap that the batch-dependent memory takes at the cached maximum.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import statistics
import time

from interlingua.benchmarks.arguments import BenchmarkParser, positive_int
from interlingua.benchmarks.interleave import interleave_results

PEAK_KEY = "VmHWM"
#: Repeats of the one-chunk F0 / F / B measurement (each phase: the median of the repeats).
PHASE_REPEATS = 15


# --- trial (runs in a forked child) ---------------------------------------------------------------

def _status_kib(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{key} not in /proc/self/status")


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _build(settings: dict):
    import torch
    from transformers import BertConfig, BertModel

    from interlingua.models.pooling import pool

    torch.manual_seed(0)
    torch.set_num_threads(settings["threads"])
    config = BertConfig(vocab_size=settings["vocab"], hidden_size=settings["hidden"],
                        num_hidden_layers=settings["layers"], num_attention_heads=max(1, settings["hidden"] // 64),
                        intermediate_size=4 * settings["hidden"], max_position_embeddings=max(64, settings["seq_len"]))
    model = BertModel(config, add_pooling_layer=False).train()

    def encode(features):
        return pool(model(**features).last_hidden_state, features["attention_mask"], "mean")

    return model, encode


def _views(batch: int, settings: dict, seed: int):
    import torch

    generator = torch.Generator().manual_seed(seed)
    views = []
    for _ in range(2):  # source and target sentences
        ids = torch.randint(5, settings["vocab"], (batch, settings["seq_len"]), generator=generator)
        views.append({"input_ids": ids, "attention_mask": torch.ones_like(ids), "token_type_ids": torch.zeros_like(ids)})
    return views


def _step(mode: str, encode, views, loss_fn, chunk: int | None, backward=None):
    from interlingua.trainers.gradcache import cached_step, plain_step

    if mode == "plain":
        return plain_step(encode, views, loss_fn, backward=backward)
    return cached_step(encode, views, loss_fn, chunk, backward=backward)


def run_phases(spec: dict) -> dict:
    """Seconds per row of the three encoder phases on one chunk: F0 (inference-mode forward), F (forward
    with the graph) and B (backward of the chunk's surrogate), each the median of ``time_steps`` repeats."""
    import torch

    settings = spec["settings"]
    model, encode = _build(settings)
    chunk = _views(spec["chunk"], settings, seed=3)[0]
    rows = int(next(iter(chunk.values())).shape[0])
    times: dict[str, list[float]] = {"f0": [], "f": [], "b": []}
    encode(chunk).sum().backward()  # warm-up: allocate the parameter gradients
    for _ in range(max(3, spec.get("time_steps", 3))):
        model.zero_grad(set_to_none=False)
        start = time.perf_counter()
        with torch.inference_mode():
            encode(chunk)
        mid = time.perf_counter()
        embeddings = encode(chunk)
        forward_end = time.perf_counter()
        (embeddings * torch.ones_like(embeddings)).sum().backward()
        end = time.perf_counter()
        for key, seconds in (("f0", mid - start), ("f", forward_end - mid), ("b", end - forward_end)):
            times[key].append(seconds)
    return {key: statistics.median(values) / rows for key, values in times.items()}


class PhaseClock:
    """Seconds spent in each phase of a step, read through the step's own hooks (``encode``, ``loss_fn``,
    ``backward``): ``first_pass`` (encoder calls under inference mode: cached pass 1), ``forward`` (encoder
    calls with the graph: cached pass 2 and the kept chunk, or the plain forward), ``loss`` (the loss
    forward), ``backward`` (every backward call: cached chunk surrogates, or the plain loss's). The rest of a
    step (the cached loss gradient ``autograd.grad``, concatenation, random-state bookkeeping) is its time
    minus these."""

    PHASES = ("first_pass", "forward", "loss", "backward")

    def __init__(self, encode, loss_fn):
        self._encode, self._loss_fn = encode, loss_fn
        self.seconds = dict.fromkeys(self.PHASES, 0.0)

    def reset(self) -> None:
        self.seconds = dict.fromkeys(self.PHASES, 0.0)

    def _timed(self, phase: str, function, *args):
        start = time.perf_counter()
        try:
            return function(*args)
        finally:
            self.seconds[phase] += time.perf_counter() - start

    def encode(self, features):
        import torch

        return self._timed("first_pass" if torch.is_inference_mode_enabled() else "forward", self._encode, features)

    def loss_fn(self, embeddings):
        return self._timed("loss", self._loss_fn, embeddings)

    def backward(self, scalar) -> None:
        self._timed("backward", scalar.backward)


def run_trial(spec: dict) -> dict:
    """Peak RSS growth (MiB) of one step at ``spec['batch']`` pairs, and optionally its time and phases."""
    from interlingua.trainers.objectives.translation_ranking import TranslationRankingLoss

    if spec["mode"] == "phases":
        return run_phases(spec)
    settings = spec["settings"]
    model, encode = _build(settings)
    loss = TranslationRankingLoss(temperature=0.05)

    def loss_fn(embeddings):
        return loss(*embeddings)

    _step("plain", encode, _views(2, settings, seed=1), loss_fn, None)  # allocate parameter gradients
    model.zero_grad(set_to_none=False)
    views = _views(spec["batch"], settings, seed=2)
    can_reset = _reset_peak()
    base = _status_kib("VmRSS")
    start = time.perf_counter()
    _step(spec["mode"], encode, views, loss_fn, spec.get("chunk"))
    first = time.perf_counter() - start
    peak = _status_kib(PEAK_KEY)
    result = {"growth_mib": (peak - base) / 1024, "peak_reset": can_reset, "first_step_s": first}
    if spec.get("time_steps"):  # the mean over the timed steps, of the step and of its phases
        clock = PhaseClock(encode, loss_fn)
        steps = spec["time_steps"]
        start = time.perf_counter()
        for _ in range(steps):
            model.zero_grad(set_to_none=False)
            _step(spec["mode"], clock.encode, views, clock.loss_fn, spec.get("chunk"), clock.backward)
        result["step_s"] = (time.perf_counter() - start) / steps
        result["phases_s"] = {phase: seconds / steps for phase, seconds in clock.seconds.items()}
    return result


# --- driver --------------------------------------------------------------------------------------

def _pin_malloc() -> None:
    """Fixed glibc mmap/trim thresholds: large freed blocks go back to the OS, so RSS tracks live memory."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 131072)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 131072)  # M_TRIM_THRESHOLD
    except OSError:  # not glibc: the measurement is coarser but still bounded by the cap
        pass


def _fork_noting_sigterm() -> tuple[int, object, list[int]]:
    """``os.fork()`` with SIGTERM's handler swapped for one that only notes the signal: returns the pid, the handler
    to put back and the signals noted. The handler's exception raised in a library's at-fork callback (filelock
    registers one) is printed as "Exception ignored" and lost, and the driver searched on. Blocking SIGTERM here
    would not help: the kernel hands it to another thread (torch's), and the handler still runs in this one."""
    noted: list[int] = []
    handler = signal.signal(signal.SIGTERM, lambda signum, frame: noted.append(signum))
    return os.fork(), handler, noted


def _put_back_sigterm(handler, noted: list[int]) -> None:
    """The driver's SIGTERM handler again, and a SIGTERM noted while forking raised again, to that handler."""
    signal.signal(signal.SIGTERM, handler)
    if noted:
        signal.raise_signal(signal.SIGTERM)


def _trial(mode: str, batch: int, settings: dict, chunk: int | None = None, time_steps: int = 0) -> dict:
    """Run one trial in a forked child (the parent has imported torch and transformers but run no op, so
    the child starts clean and cheap); returns its JSON result."""
    spec = {"mode": mode, "batch": batch, "chunk": chunk, "settings": settings, "time_steps": time_steps}
    read_fd, write_fd = os.pipe()
    pid, handler, noted = _fork_noting_sigterm()
    if pid == 0:  # child: never returns, whatever happens
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the driver's handler (interleave_results')
        os.close(read_fd)
        code = 0
        try:
            _pin_malloc()
            payload = json.dumps(run_trial(spec))
        except BaseException as err:  # noqa: BLE001 - report any failure (e.g. MemoryError) to the parent
            payload, code = json.dumps({"growth_mib": float("inf"), "error": repr(err)}), 1
        try:
            with os.fdopen(write_fd, "w") as out:
                out.write(payload)
        except OSError:  # the parent is gone (stopped): nobody to report to, and no traceback
            code = 1
        os._exit(code)
    os.close(write_fd)
    try:
        _put_back_sigterm(handler, noted)  # a SIGTERM noted while forking acts here: the trial is killed below
        with os.fdopen(read_fd) as inp:
            data = inp.read()
    except BaseException:  # stopped (SIGTERM's exception) while the trial runs: the child goes first
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    _, status = os.waitpid(pid, 0)
    if not data:
        return {"growth_mib": float("inf"), "error": f"trial process died (status {status})"}
    return json.loads(data)


def _largest(mode: str, settings: dict, cap_mib: float, start: int, limit: int | None, chunk: int | None,
             log: list) -> tuple[int, dict]:
    """Largest batch (pairs) whose step grows RSS by at most ``cap_mib``: doubling, then bisection."""

    def fits(batch: int) -> tuple[bool, dict]:
        result = _trial(mode, batch, settings, chunk if mode == "cached" else None)
        ok = result["growth_mib"] <= cap_mib
        log.append((mode, batch, result["growth_mib"], ok))
        print(f"  {mode:6s} batch {batch:6d}: +{result['growth_mib']:8.1f} MiB {'fits' if ok else 'over cap'}"
              f" ({result.get('first_step_s', float('nan')):.2f} s)", flush=True)
        return ok, result

    good, good_result = 0, {}
    batch = start
    while True:
        if limit is not None and batch >= limit:
            batch = limit
        ok, result = fits(batch)
        if not ok:
            bad = batch
            break
        good, good_result = batch, result
        if limit is not None and batch >= limit:
            return good, good_result
        batch *= 2
    # bisect between good and bad to ~6% (plain) / ~12% (cached), at least 1 pair
    while bad - good > max(1, good // (16 if mode == "plain" else 8)):
        mid = (good + bad) // 2
        ok, result = fits(mid)
        if ok:
            good, good_result = mid, result
        else:
            bad = mid
    return good, good_result


def _given(mode: str, batch: int, settings: dict, cap_mib: float, chunk: int | None, log: list, option: str) -> int:
    """A batch given on the command line instead of searched: it must fit, and (plain) one ~6% larger should not."""
    larger = batch + max(1, batch // 16)
    checks = [(batch, True)] + ([(larger, False)] if mode == "plain" else [])
    for size, should_fit in checks:
        result = _trial(mode, size, settings, chunk if mode == "cached" else None)
        fits = result["growth_mib"] <= cap_mib
        log.append((mode, size, result["growth_mib"], fits))
        print(f"  {mode:6s} batch {size:6d}: +{result['growth_mib']:8.1f} MiB {'fits' if fits else 'over cap'} "
              f"(given, {result.get('first_step_s', float('nan')):.2f} s)", flush=True)
        if should_fit and not fits:
            raise SystemExit(f"{option} {batch} does not fit under the {cap_mib:.0f} MiB cap; leave {option} out to search")
        if fits and not should_fit:
            print(f"  warning: {option} {batch} is not the largest batch that fits ({size} does too); the ratios "
                  f"below are for the batch given", flush=True)
    return batch


def main(argv: list[str] | None = None) -> None:
    parser = BenchmarkParser(__doc__)
    parser.add_argument("--trial", help=argparse.SUPPRESS)
    parser.add_argument("--cap-mib", type=float, default=None, help="memory cap over the warmed-up baseline (default 64, quick 32)")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--chunk", type=int, default=None, help="cached rows per encoder call (default: plain max rows)")
    parser.add_argument("--max-ratio", type=int, default=None, help="stop the cached search at this x plain max (default 64, quick 16)")
    parser.add_argument("--time-steps", type=int, default=None,
                        help="timed steps of the cached run at its maximum (default 2, quick 1); the runs at the plain "
                             "maximum time as many steps as make the same number of pairs")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--plain-batch", type=int, default=None,
                        help="skip the plain search: this batch (checked: it fits, ~6%% more does not)")
    parser.add_argument("--cached-batch", type=int, default=None,
                        help="skip the cached search: this batch (checked: it fits), e.g. --max-ratio x the plain one")
    parser.add_argument("--rounds", type=positive_int, default=None, help="interleaved timing rounds (default 3, quick 2)")
    parser.add_argument("--quick", action="store_true", help="cap 32 MiB, cached search up to 16x, 1 timed step")
    args = parser.parse_args(argv)

    if args.trial:  # run one trial in this process (debugging)
        print(json.dumps(run_trial(json.loads(args.trial))))
        return
    # Import the heavy modules once, before forking the trials (no torch op runs in the parent).
    import transformers  # noqa: F401
    from transformers import BertModel  # noqa: F401

    import interlingua.models.pooling  # noqa: F401
    import interlingua.trainers.gradcache  # noqa: F401
    import interlingua.trainers.objectives.translation_ranking  # noqa: F401

    # SIGTERM (timeout's) during the batch search is an exception, so the running trial's child is stopped too
    # (_trial); the timing rounds below put their own handler in place, which reports the complete rounds.
    signal.signal(signal.SIGTERM, _stop_the_search)
    cap = args.cap_mib if args.cap_mib is not None else (32.0 if args.quick else 64.0)
    time_steps = args.time_steps or (1 if args.quick else 2)
    max_ratio = args.max_ratio or (16 if args.quick else 64)
    settings = {"hidden": args.hidden, "layers": args.layers, "seq_len": args.seq_len, "vocab": args.vocab,
                "threads": args.threads}
    started = time.perf_counter()
    log: list = []
    print(f"encoder: BERT hidden {args.hidden}, {args.layers} layers, seq len {args.seq_len}; cap +{cap:.0f} MiB RSS")
    if args.plain_batch:
        plain_max = _given("plain", args.plain_batch, settings, cap, None, log, "--plain-batch")
    else:
        plain_max, _ = _largest("plain", settings, cap, start=2, limit=None, chunk=None, log=log)
    if plain_max == 0:
        raise SystemExit(f"no plain batch fits under {cap} MiB; raise --cap-mib")
    chunk = args.chunk or max(1, plain_max)
    if args.cached_batch:
        cached_max = _given("cached", args.cached_batch, settings, cap, chunk, log, "--cached-batch")
    else:
        cached_max, _ = _largest("cached", settings, cap, start=plain_max, limit=max_ratio * plain_max, chunk=chunk,
                                 log=log)

    rounds = args.rounds or (2 if args.quick else 3)
    print(f"  timing: {rounds} interleaved rounds (plain, cached at plain max, cached at its max, phases) ...", flush=True)
    # Every timed run covers about the same pairs (so the same stretch of time, whatever the machine's load
    # does): the runs at the plain maximum take as many steps as the cached maximum's steps hold pairs.
    small_steps = math.ceil(cached_max * time_steps / plain_max)
    runs = interleave_results({
        "plain_eq": lambda: _trial("plain", plain_max, settings, time_steps=small_steps),
        "cached_eq": lambda: _trial("cached", plain_max, settings, chunk=chunk, time_steps=small_steps),
        "cached_big": lambda: _trial("cached", cached_max, settings, chunk=chunk, time_steps=time_steps),
        "phases": lambda: _trial("phases", chunk, settings, chunk=chunk, time_steps=PHASE_REPEATS),
    }, rounds, stop_on_sigterm=True,  # a time limit still reports the complete rounds
        on_result=lambda r, name, _: print(f"  round {r + 1}/{rounds}: {name} done", flush=True))
    if not runs["plain_eq"]:
        return
    rounds = len(runs["plain_eq"])
    failed = [f"{name}: {r['error']}" for name, results in runs.items() for r in results if "error" in r]
    if failed:
        raise SystemExit("a timed run failed: " + "; ".join(failed))
    elapsed = time.perf_counter() - started
    report(runs, plain_max, cached_max, chunk, cap, (small_steps, time_steps), rounds, max_ratio, elapsed,
           given=bool(args.cached_batch))


def _stop_the_search(signum, frame):
    raise SystemExit("stopped (SIGTERM) during the batch search: nothing to report")


def report(runs: dict[str, list[dict]], plain_max: int, cached_max: int, chunk: int, cap: float,
           time_steps: tuple[int, int], rounds: int, max_ratio: int, elapsed: float, given: bool = False) -> None:
    """Print the table, the one-chunk phases with the floor, the breakdown of the steps and the goal line."""
    def per_sample(name: str, batch: int) -> list[float]:
        return [r["step_s"] / batch for r in runs[name]]

    plain_t, eq_t, big_t = per_sample("plain_eq", plain_max), per_sample("cached_eq", plain_max), per_sample("cached_big", cached_max)
    eq_ratios = [c / p for c, p in zip(eq_t, plain_t)]  # per round: cached over plain time per sample
    big_ratios = [c / p for c, p in zip(big_t, plain_t)]
    floors = [(ph["f0"] + ph["f"] + ph["b"]) / (ph["f"] + ph["b"]) for ph in runs["phases"]]
    floors_f = [1 + ph["f"] / (ph["f"] + ph["b"]) for ph in runs["phases"]]
    plain_eq, cached_eq, cached_big = runs["plain_eq"][0], runs["cached_eq"][0], runs["cached_big"][0]
    print(f"\ncap +{cap:.0f} MiB over the warmed-up RSS; cached chunk {chunk} rows per encoder call; "
          f"timed steps per run (mean): {time_steps[0]} at the plain maximum, {time_steps[1]} at the cached maximum; "
          f"{rounds} interleaved rounds (median, min-max); {elapsed:.0f} s in all\n")
    print("| run | batch (pairs) | step peak +MiB | samples/s | time/sample vs plain | batch vs plain max |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| plain, largest that fits | {plain_max} | {plain_eq['growth_mib']:.1f} | {1 / statistics.median(plain_t):,.1f} "
          f"| 1.00 | 1.00 |")
    print(f"| cached, same batch | {plain_max} | {cached_eq['growth_mib']:.1f} | {1 / statistics.median(eq_t):,.1f} "
          f"| {_spread(eq_ratios)} | 1.00 |")
    note = " (given)" if given else (" (search cap)" if cached_max >= max_ratio * plain_max else "")
    print(f"| cached, largest that fits{note} "
          f"| {cached_max} | {cached_big['growth_mib']:.1f} | {1 / statistics.median(big_t):,.1f} | {_spread(big_ratios)} "
          f"| {cached_max / plain_max:.1f} |")
    phases = {k: statistics.median(r[k] for r in runs["phases"]) * 1e3 for k in ("f0", "f", "b")}
    print(f"\nper row ({chunk}-row chunk): F0 (inference-mode forward) {phases['f0']:.3f} ms, F (forward with graph) "
          f"{phases['f']:.3f} ms, B (backward) {phases['b']:.3f} ms -> floor (F0+F+B)/(F+B) = {_spread(floors)} "
          f"(1 + F/(F+B) = {_spread(floors_f)}, pass 1 as dear as a forward with the graph)")

    print("\nbreakdown, ms per pair (share of the step), median over rounds; expected = 2 rows per pair x the one-chunk phase:")
    print("| phase | plain | cached, same batch | cached at its max | expected (cached) |")
    print("|---|---:|---:|---:|---:|")
    columns = [("plain_eq", plain_max), ("cached_eq", plain_max), ("cached_big", cached_max)]
    labels = {"first_pass": ("first pass (inference mode)", 2 * phases["f0"]),
              "forward": ("forwards with the graph (pass 2, kept chunk)", 2 * phases["f"]),
              "backward": ("backwards (chunk surrogates / plain loss)", 2 * phases["b"]),
              "loss": ("loss forward", None),
              "rest": ("rest: loss gradient, concatenation, bookkeeping", None),
              "step": ("step", 2 * (phases["f0"] + phases["f"] + phases["b"]))}
    for key, (label, expected) in labels.items():
        cells = []
        for name, batch in columns:
            values, shares = [], []
            for r in runs[name]:
                spent = r["phases_s"]
                seconds = {"rest": r["step_s"] - sum(spent.values()), "step": r["step_s"]}.get(key, spent.get(key, 0.0))
                values.append(seconds / batch * 1e3)
                shares.append(seconds / r["step_s"])
            cells.append(f"{statistics.median(values):.3f} ({100 * statistics.median(shares):.0f}%)")
        print(f"| {label} | {' | '.join(cells)} | {'' if expected is None else f'{expected:.3f}'} |")

    batch_part = cached_big["growth_mib"] - cached_eq["growth_mib"]
    print(f"\ncached: growth at the cached max minus growth at the plain max (same chunk activations; the whole-batch "
          f"embeddings and loss blocks): {batch_part:.1f} MiB = {100 * batch_part / cap:.0f}% of the cap")
    floor, at_max = statistics.median(floors), statistics.median(big_ratios)
    print(f"goal: the cached step at its maximum within 5% of the floor -> {at_max:.2f}x vs floor {floor:.2f}x "
          f"({100 * (at_max / floor - 1):+.1f}%: {'met' if at_max <= 1.05 * floor else 'not met'}), "
          f"batch {cached_max / plain_max:.1f}x the plain maximum")


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


if __name__ == "__main__":
    main()
