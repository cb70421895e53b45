"""`interlingua refresh`: fingerprints, lineage, reuse of unchanged shards, new lines, retention (#18)."""

from __future__ import annotations

import argparse
import os
import random
import uuid
from pathlib import Path

import fsspec
import pyarrow as pa
import pytest

from interlingua.core.errors import UserError
from interlingua.operators.corpus import CorpusStore, Lineage
from interlingua.operators.corpus.input_fingerprints import fingerprint, list_inputs
from interlingua.operators.corpus.manifest import config_hash
from interlingua.workflows.commands import corpus as corpus_command
from interlingua.workflows.corpus_retention import prune_corpus
from interlingua.workflows.refresh import RefreshSpec, _plan, _ADAPTERS, refresh

LEXICON = {"the": "das", "house": "haus", "is": "ist", "small": "klein", "big": "gross", "book": "buch",
           "old": "alt", "red": "rot", "Berlin": "Berlin", "green": "gruen", "tree": "baum"}


def pairs(n: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out, seen = [], set()
    while len(out) < n:
        words = [rng.choice(sorted(LEXICON)) for _ in range(rng.randint(3, 7))]
        if " ".join(words) not in seen:
            seen.add(" ".join(words))
            out.append((" ".join(words), " ".join(LEXICON[w] for w in words)))
    return out


def write_tsv(fs, path: str, rows: list[tuple[str, str]]) -> None:
    fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
    fs.pipe_file(path, ("\n".join(f"{s}\t{t}" for s, t in rows) + "\n").encode())


def spec_for(base: str, store_root: str, **overrides) -> RefreshSpec:
    config = {"corpus_name": "bt", "store_root": store_root, "src_lang": "en", "tgt_lang": "de",
              "rows_per_shard": 8, "workers": 1} | overrides.pop("config", {})
    return RefreshSpec(workflow="bitext-corpus", inputs=[f"{base}/in/*.tsv"], config=config, **overrides)


# -- planning, fingerprints, bad input (no Ray) ---------------------------------------------------


def publish_as_refresh(spec: RefreshSpec, urls: list[str]) -> None:
    """A version that looks like a refresh made it from these inputs (so planning can be tested without Ray)."""
    adapter = _ADAPTERS["bitext-corpus"]
    config = adapter.validate(spec)
    spec_config = adapter.spec_config(config)
    store = CorpusStore(config.store_root)
    writer = store.open_version("bt", spec_config, urls, input_fingerprints={u: fingerprint(u, content=True) for u in urls},
                                lineage=Lineage(spec_config_hash=config_hash(spec_config)))
    for k, url in enumerate(urls):
        writer.write_shard(f"s{k}", pa.table({"id": ["1"]}), input=url)
    writer.publish()


def test_nothing_new_makes_no_version_and_a_changed_config_starts_a_new_line(tmp_path: Path) -> None:
    fs = fsspec.filesystem("file")
    for name, seed in (("a", 1), ("b", 2)):
        write_tsv(fs, f"{tmp_path}/in/{name}.tsv", pairs(5, seed))
    spec = spec_for(str(tmp_path), str(tmp_path / "store"))
    urls = list_inputs(spec.inputs)
    assert urls == [f"{tmp_path}/in/a.tsv", f"{tmp_path}/in/b.tsv"]
    publish_as_refresh(spec, urls)
    store = CorpusStore(str(tmp_path / "store"))
    before = store.versions("bt")

    lines: list[str] = []
    result = refresh(spec, log=lines.append)
    assert result == {"corpus": "bt", "published": False, "version": before[0], "mode": "unchanged"}
    assert lines == [f"refresh bt: nothing new since {before[0]} (2 input(s) unchanged); no new version"]
    assert store.versions("bt") == before

    changed = spec_for(str(tmp_path), str(tmp_path / "store"), config={"max_tokens": 99})
    plan = _plan(changed, _ADAPTERS["bitext-corpus"], _ADAPTERS["bitext-corpus"].validate(changed))
    assert plan.mode == "new-line" and plan.added == urls and "config changed" in plan.notes[0]
    assert "a new line of versions" in plan.notes[0]

    os.utime(f"{tmp_path}/in/b.tsv", ns=(1, 1))  # same bytes, new modification time: unchanged
    write_tsv(fs, f"{tmp_path}/in/c.tsv", pairs(3, 3))
    fs.rm_file(f"{tmp_path}/in/a.tsv")
    plan = _plan(spec, _ADAPTERS["bitext-corpus"], _ADAPTERS["bitext-corpus"].validate(spec))
    assert (plan.mode, plan.added, plan.changed, plan.removed, plan.unchanged) == (
        "incremental", [f"{tmp_path}/in/c.tsv"], [], [f"{tmp_path}/in/a.tsv"], [f"{tmp_path}/in/b.tsv"])
    write_tsv(fs, f"{tmp_path}/in/b.tsv", pairs(5, 9))  # other bytes at the same path: changed
    plan = _plan(spec, _ADAPTERS["bitext-corpus"], _ADAPTERS["bitext-corpus"].validate(spec))
    assert (plan.changed, plan.unchanged) == ([f"{tmp_path}/in/b.tsv"], [])


def test_fingerprints_use_content_hash_on_memory_and_mtime_locally(tmp_path: Path) -> None:
    memory = f"memory://fp-{uuid.uuid4().hex}/x.tsv"
    with fsspec.open(memory, "wb") as handle:
        handle.write(b"a\tb\n")
    first = fingerprint(memory)
    assert first.sha256 is not None and first.mtime is None and first.size == 4
    with fsspec.open(memory, "wb") as handle:
        handle.write(b"c\td\n")  # same size, new content
    assert fingerprint(memory) != first
    local = tmp_path / "x.tsv"
    local.write_bytes(b"a\tb\n")
    assert fingerprint(str(local)).mtime is not None and fingerprint(str(local)).sha256 is None


@pytest.mark.parametrize("inputs, message", [
    (["{d}/nothing/*.tsv"], "matches no file"),
    (["{d}/missing.tsv"], "does not exist"),
    (["{d}"], "is a folder"),
])
def test_missing_inputs_are_one_line_errors(tmp_path: Path, inputs: list[str], message: str) -> None:
    spec = RefreshSpec(workflow="bitext-corpus", inputs=[i.format(d=tmp_path) for i in inputs],
                       config={"store_root": str(tmp_path / "store")})
    with pytest.raises(UserError, match=message):
        refresh(spec, log=lambda line: None)


def test_spec_mistakes_are_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="list the input files under 'inputs'"):
        refresh(RefreshSpec(workflow="bitext-corpus", inputs=["x.tsv"], config={"source": "x.tsv"}))
    with pytest.raises(UserError, match="needs 'inputs'"):
        refresh(RefreshSpec(workflow="bitext-corpus", config={}))
    with pytest.raises(UserError, match="takes its inputs from its config"):
        refresh(RefreshSpec(workflow="ease-corpus", inputs=["x.bz2"]))
    with pytest.raises(UserError, match="max_tokens"):
        refresh(RefreshSpec(workflow="bitext-corpus", inputs=["x.tsv"], config={"max_tokens": 0}))


def _published(store: CorpusStore, count: int) -> list[str]:
    """``count`` one-row versions of corpus ``bt``, oldest first."""
    made = []
    for k in range(count):
        writer = store.open_version("bt", {"k": k}, ["x"])
        writer.write_shard("s0", pa.table({"id": [str(k)]}))
        made.append(writer.publish().version)
    return made


def test_retention_keeps_latest_pins_and_registered_training_data(tmp_path: Path) -> None:
    store = CorpusStore(str(tmp_path))
    made = _published(store, 5)

    class ModelVersion:
        def __init__(self, name, version, tags):
            self.name, self.version, self.tags = name, version, tags

    class Registry:  # what MlflowClient.search_model_versions returns, reduced to the fields read
        def search_model_versions(self, max_results=None, page_token=None):
            return [ModelVersion("enc", "3", {"interlingua.corpus_versions": f"other@v-x,bt@{made[0]}"}),
                    ModelVersion("enc", "4", {})]

    store.pin("bt", made[1])
    report = prune_corpus(store, "bt", keep_last=2, client=Registry())
    assert store.versions("bt") == [made[0], made[1], made[3], made[4]]
    assert f"kept {made[0]}: referenced by a registered model (enc/3)" in report
    assert f"kept {made[1]}: pinned" in report and f"deleted 1 version(s): {made[2]}" in report
    assert store.latest_version("bt") == made[4]


def test_retention_sees_versions_past_the_registrys_first_page(tmp_path: Path) -> None:
    """MLflow returns 10,000 model versions per search unless paged: a version the 10,001st protects is kept."""
    store = CorpusStore(str(tmp_path))
    made = _published(store, 3)

    class Page(list):
        token = None

    class ModelVersion:
        def __init__(self, version, tags):
            self.name, self.version, self.tags = "enc", version, tags

    class Registry:  # a first page full of versions that refer to nothing; the protecting one on the next
        def search_model_versions(self, max_results=10_000, page_token=None):
            if page_token is None:
                page = Page(ModelVersion(str(k), {}) for k in range(min(max_results, 10_000)))
                page.token = "next"
                return page
            return Page([ModelVersion("10001", {"interlingua.corpus_versions": f"bt@{made[0]}"})])

    report = prune_corpus(store, "bt", keep_last=1, client=Registry())
    assert store.versions("bt") == [made[0], made[2]] and f"kept {made[0]}: referenced by a registered model" in report


def test_retention_reads_the_real_mlflow_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlflow.tracking import MlflowClient

    from interlingua.models.model_card import ModelCard

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    client = MlflowClient(tracking_uri=uri, registry_uri=uri)
    store = CorpusStore(str(tmp_path / "store"))
    made = _published(store, 3)
    client.create_registered_model("enc")
    card = ModelCard(base_model="b", objective="o", workflow="w", corpus_versions={"bt": made[0]})
    client.create_model_version("enc", source=str(tmp_path), tags=card.tags())
    report = prune_corpus(store, "bt", keep_last=1, client=client)
    assert store.versions("bt") == [made[0], made[2]] and "enc/1" in report


# -- end to end on Ray ----------------------------------------------------------------------------


def _roots(kind: str, tmp_path: Path) -> tuple[str, str]:
    if kind == "local":
        return str(tmp_path / "data"), str(tmp_path / "store")
    base = f"memory://refresh-{uuid.uuid4().hex}"
    return base, f"{base}/store"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["local", "memory"])
def test_refresh_reuses_unchanged_inputs_and_records_lineage(tmp_path: Path, ray_local, kind: str, capsys,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    base, store_root = _roots(kind, tmp_path)
    fs, _ = fsspec.core.url_to_fs(base)
    data = {"a": pairs(12, 1), "b": pairs(10, 2), "c": pairs(9, 3)}
    for name, rows in data.items():
        write_tsv(fs, f"{base}/in/{name}.tsv", rows)
    spec = spec_for(base, store_root, relearn_share=0.9)
    lines: list[str] = []
    first = refresh(spec, log=lines.append)
    store = CorpusStore(store_root)
    m1 = store.manifest("bt")
    assert first["published"] and first["mode"] == "full" and m1.total_rows == 31
    assert m1.lineage.parent is None and m1.lineage.shards_written == len(m1.shards)
    assert {s.annotations["fast_align.learned_on"] for s in m1.shards} == {"yes"}

    url = {name: list_inputs([f"{base}/in/{name}.tsv"])[0] for name in "abc"}
    # add d, change b (two more pairs, one a duplicate of a pair in a), remove c
    data["b"] = data["b"] + [pairs(14, 9)[-1], data["a"][0]]
    write_tsv(fs, f"{base}/in/b.tsv", data["b"])
    write_tsv(fs, f"{base}/in/d.tsv", pairs(6, 4))
    fs.rm_file(f"{base}/in/c.tsv")
    url["d"] = list_inputs([f"{base}/in/d.tsv"])[0]

    # the refresh fails after writing one new shard: nothing is published, latest stays; the rerun resumes
    import interlingua.workflows.bitext_corpus as bitext_corpus

    real_write, written = bitext_corpus._write_shard, []

    def failing_write(*args, **kwargs):
        if written:
            raise RuntimeError("simulated crash mid-refresh")
        written.append(args[1].id)
        return real_write(*args, **kwargs)

    monkeypatch.setattr(bitext_corpus, "_write_shard", failing_write)
    with pytest.raises(RuntimeError, match="simulated crash"):
        refresh(spec, log=lines.append)
    assert store.latest_version("bt") == m1.version and store.versions("bt") == [m1.version]
    resumed: list[str] = []
    monkeypatch.setattr(bitext_corpus, "_write_shard", lambda *a, **k: (resumed.append(a[1].id), real_write(*a, **k))[1])
    second = refresh(spec, log=lines.append)
    assert written[0] not in resumed and len(resumed) == second["shards_written"] - 1
    m2 = store.manifest("bt")
    assert second["published"] and second["mode"] == "incremental" and m2.version != m1.version
    lineage = m2.lineage
    assert (lineage.parent, lineage.inputs_added, lineage.inputs_changed, lineage.inputs_removed, lineage.inputs_unchanged) == (
        m1.version, (url["d"],), (url["b"],), (url["c"],), (url["a"],))

    reused = [s for s in m2.shards if s.reused_from is not None]
    parent_a = [s for s in m1.shards if s.input == url["a"]]
    assert [(s.shard_id, s.sha256) for s in reused] == [(s.shard_id, s.sha256) for s in parent_a]
    assert {s.input for s in m2.shards if s.reused_from is None} == {url["b"], url["d"]}
    assert not any(s.input == url["c"] for s in m2.shards)
    assert (lineage.shards_reused, lineage.shards_written) == (len(parent_a), len(m2.shards) - len(parent_a))
    # counts: this refresh read only b and d; the duplicate of a's pair was caught against the reused shards
    assert lineage.counters["input"] == 12 + 6 and lineage.counters["hygiene.duplicate"] == 1
    assert m2.counters["input"] == 12 + 12 + 6 and m2.total_rows == 12 + 11 + 6
    texts = sorted(store.read_table("bt", columns=["src"]).column("src").to_pylist())
    assert texts == sorted([s for s, _ in data["a"]] + [s for s, _ in data["b"][:-1]] + [s for s, _ in pairs(6, 4)])
    # the parent's fast_align parameters aligned the new shards, and each shard says so
    params = [f for f in m2.artifacts if f.path.endswith("fast_align_params.json")]
    assert [f.sha256 for f in params] == [f.sha256 for f in m1.artifacts if f.path.endswith("fast_align_params.json")]
    assert {s.annotations["fast_align"] for s in m2.shards} == {params[0].sha256[:16]}
    assert {s.annotations["fast_align.learned_on"] for s in m2.shards if s.reused_from is None} == {"no"}
    if kind == "local":  # unchanged shards are hard links: no bytes written for them
        folder = Path(store_root) / "bt"
        assert all((folder / m2.version / s.path).stat().st_ino == (folder / m1.version / s.path).stat().st_ino
                   for s in reused)
    else:  # by reference, re-checked when read
        assert {s.stored_in for s in reused} == {m1.version}

    assert refresh(spec, log=lines.append)["published"] is False  # nothing new now
    assert corpus_command.run(argparse.Namespace(corpus_action="diff", name="bt", old=m1.version, new=m2.version,
                                                 json=False, root=store_root)) == 0
    diff = capsys.readouterr().out
    assert f"inputs added    {url['d']}" in diff and "incremental refresh" in diff
    assert any(line.startswith(f"published bt/{m2.version} (incremental)") for line in lines)

    if kind == "local":  # more new data than relearn_share allows: parameters learned anew, every shard rebuilt
        write_tsv(fs, f"{base}/in/e.tsv", pairs(8, 5))
        third = refresh(spec.model_copy(update={"relearn_share": 0.1}), log=lines.append)
        m3 = store.manifest("bt")
        assert third["mode"] == "full" and m3.lineage.parent == m2.version and m3.lineage.shards_reused == 0
        assert any("learned anew" in note and "relearn_share 10%" in note for note in m3.lineage.notes)
        assert {s.annotations["fast_align.learned_on"] for s in m3.shards} == {"yes"}
        assert m3.total_rows == m2.total_rows + 8


def test_relearn_share_counts_the_new_pairs_kept_over_the_new_versions_pairs(tmp_path: Path, monkeypatch) -> None:
    from interlingua.core import runtime

    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: pytest.fail("Ray started"))  # small: in process
    base, store_root = _roots("local", tmp_path)
    fs, _ = fsspec.core.url_to_fs(base)
    old = pairs(16, 1)
    write_tsv(fs, f"{base}/in/a.tsv", old)
    spec = spec_for(base, store_root, relearn_share=0.2)
    assert refresh(spec, log=lambda line: None)["mode"] == "full"
    write_tsv(fs, f"{base}/in/b.tsv", old[:4] + [pairs(17, 1)[-1]])  # 4 pairs the corpus holds, 1 new
    second = refresh(spec, log=lambda line: None)
    manifest = CorpusStore(store_root).manifest("bt")
    assert second["mode"] == "incremental" and manifest.total_rows == 17
    assert manifest.lineage.counters["hygiene.duplicate"] == 4
    assert [n for n in manifest.lineage.notes if "reused" in n] == [
        f"fast_align parameters of {manifest.lineage.parent} reused: 1 of the new version's 17 pairs (5.9%) were not "
        "seen by them (relearn above relearn_share 20%)"]
    # rows without an id column are numbered per input: each input's numbers carry its key, so the ids of the
    # version stay unique (both inputs have a row 1; duplicate ids stopped explicit-alignment training's word
    # retrieval rows)
    ids = CorpusStore(store_root).read_table("bt", columns=["id"]).column("id").to_pylist()
    keys = {s.input: s.shard_id.split("-")[1] for s in manifest.shards}
    assert len(ids) == len(set(ids)) == 17
    assert {i.split(":")[0] for i in ids} == set(keys.values()) and len(set(keys.values())) == 2
