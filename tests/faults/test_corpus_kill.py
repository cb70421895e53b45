"""SIGKILL of the driver, and of one Ray worker, at random points of a bitext-corpus build: every rerun ends
with shards byte-identical to a clean run's, no row lost, none duplicated.

Bounded: ``INTERLINGUA_FAULT_TRIALS`` driver-kill trials (default 2) plus one worker-kill trial, on a 400-pair
input in 8 shards. Counts are printed as ``[faults] ...`` lines (run with ``-s``)."""

from __future__ import annotations

import os
import random
import time

import psutil
import pytest

from faults.harness import (FaultCounts, cli_env, completed_shards, kill_tree, manifest_shards, ray_workers, row_ids,
                            start, version_files, wait_until)

pytestmark = pytest.mark.slow

TRIALS = int(os.environ.get("INTERLINGUA_FAULT_TRIALS", "2"))
PAIRS = 400
ROWS_PER_SHARD = 50
RUN_TIMEOUT = 420


def _write_bitext(folder) -> tuple[str, str]:
    rng = random.Random(7)
    en = "the a house cat dog big small red blue old new man woman sees eats likes book tree car road".split()
    de = "das ein haus katze hund gross klein rot blau alt neu mann frau sieht isst mag buch baum auto strasse".split()
    src, tgt = [], []
    for i in range(PAIRS):
        idx = [rng.randrange(len(en)) for _ in range(rng.randint(3, 9))]
        src.append(" ".join(en[j] for j in idx) + f" n{i}")
        tgt.append(" ".join(de[j] for j in idx) + f" n{i}")
    src[10], tgt[33] = "", "das"  # an empty side and a length-ratio reject: rejects are part of the bytes
    (folder / "raw.en").write_text("\n".join(src) + "\n", encoding="utf-8")
    (folder / "raw.de").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    return str(folder / "raw.en"), str(folder / "raw.de")


def _args(source: str, target: str, store) -> list[str]:
    return ["-m", "interlingua.workflows.cli", "run", "bitext-corpus", "--set", f"source={source}",
            "--set", f"target={target}", "--set", "src_lang=en", "--set", "tgt_lang=de",
            "--set", f"rows_per_shard={ROWS_PER_SHARD}", "--set", "iterations=2", "--set", "workers=2",
            "--set", "in_process_rows=0",  # tokenize and align on Ray actors (a worker kill is one of the faults)
            "--set", f"store_root={store}"]


def _run_to_end(args, env, log) -> int:
    process = start(args, env, log)
    try:
        return process.wait(timeout=RUN_TIMEOUT)
    except BaseException:
        kill_tree(process)
        raise


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus_faults")
    source, target = _write_bitext(root)
    store = root / "clean-store"
    assert _run_to_end(_args(source, target, store), cli_env(root / "state-clean"), root / "clean.log") == 0, \
        (root / "clean.log").read_text()[-3000:]
    files = version_files(store)
    assert sum("/data/" in name for name in files) == PAIRS // ROWS_PER_SHARD
    return {"root": root, "source": source, "target": target, "files": files, "shards": manifest_shards(store),
            "ids": row_ids(store)}


def _check_same_as_clean(clean, store, counts: FaultCounts) -> None:
    files = version_files(store)
    assert files.keys() == clean["files"].keys()
    different = [name for name in files if files[name] != clean["files"][name]]
    assert different == [], f"shards differ from the clean run: {different}"
    assert manifest_shards(store) == clean["shards"]
    ids = row_ids(store)
    counts.rows_checked += sum(ids.values())
    counts.lost += len(set(clean["ids"]) - set(ids))
    counts.duplicated += sum(n - 1 for n in ids.values() if n > 1)
    assert set(ids) == set(clean["ids"]) and all(n == 1 for n in ids.values())


def test_two_clean_runs_give_byte_identical_shards(clean):
    """Same config + inputs + code => the same bytes (issue #13 item 4), with the default thread count."""
    root = clean["root"] / "clean-again"
    root.mkdir()
    store = root / "store"
    assert _run_to_end(_args(clean["source"], clean["target"], store), cli_env(root / "state"), root / "run.log") == 0
    counts = FaultCounts(trials=1)
    _check_same_as_clean(clean, store, counts)
    print(counts.line("bitext-corpus, second clean run byte-identical"))


def test_driver_killed_at_random_points_then_rerun_matches_the_clean_run(clean):
    rng = random.Random(13)
    counts = FaultCounts()
    shards = PAIRS // ROWS_PER_SHARD
    for trial in range(TRIALS):
        root = clean["root"] / f"driver-{trial}"
        root.mkdir()
        store, env, log = root / "store", cli_env(root / "state"), root / "run.log"
        args = _args(clean["source"], clean["target"], store)
        # trial 0: before any shard is complete (start-up, tokenizing or learning); later: after k shards
        after = 0 if trial == 0 else rng.randint(1, shards - 1)
        process = start(args, env, log)
        if after == 0:
            reached = wait_until(lambda: any(store.glob("*/*")), process, RUN_TIMEOUT)  # the version folder exists
        else:
            reached = wait_until(lambda: completed_shards(store) >= after, process, RUN_TIMEOUT, poll=0.01)
        killed_before_end = process.poll() is None
        kill_tree(process)
        counts.trials += 1
        if killed_before_end and reached:
            counts.faults += 1
            done = completed_shards(store)
            assert done < shards or not manifest_shards(store), "killed after publish"
            counts.notes.append(f"driver kill {trial}: {done}/{shards} shards complete at the kill")
        else:
            counts.notes.append(f"driver kill {trial}: run ended before the kill point")
        assert _run_to_end(args, env, log) == 0, log.read_text()[-3000:]
        _check_same_as_clean(clean, store, counts)
    print(counts.line("bitext-corpus, driver SIGKILL"))
    assert counts.faults >= 1 and counts.lost == 0 and counts.duplicated == 0


def test_one_ray_worker_killed_mid_alignment_then_rerun_matches_the_clean_run(clean):
    counts = FaultCounts()
    root = clean["root"] / "worker"
    root.mkdir()
    store, env, log = root / "store", cli_env(root / "state"), root / "run.log"
    args = _args(clean["source"], clean["target"], store)
    process = start(args, env, log)
    victims: list = []

    def aligner_running() -> bool:
        victims[:] = ray_workers(process, "FastAlign")
        return bool(victims)

    found = wait_until(aligner_running, process, RUN_TIMEOUT, poll=0.02)
    counts.trials += 1
    if found:
        first = list(victims)
        time.sleep(random.Random(int(os.environ.get("INTERLINGUA_FAULT_SEED", "5"))).uniform(0.0, 0.5))
        victim = (ray_workers(process, "FastAlign") or first)[0]
        try:
            victim.kill()  # one actor process of the alignment stage, at a random moment of its work
        except psutil.NoSuchProcess:
            found = False
    if found:
        counts.faults += 1
    try:
        first_rc = process.wait(timeout=RUN_TIMEOUT)
    finally:
        kill_tree(process)
    counts.notes.append(f"worker kill: first run exit {first_rc} ({'recovered in-run' if first_rc == 0 else 'rerun'})")
    if first_rc != 0:
        assert _run_to_end(args, env, log) == 0, log.read_text()[-3000:]
    _check_same_as_clean(clean, store, counts)
    print(counts.line("bitext-corpus, Ray worker SIGKILL"))
    assert counts.faults == 1 and counts.lost == 0 and counts.duplicated == 0
