"""Build a pack from small written assets (+ the installed Wikipedia leads) and run `eval` on it with a
tiny deterministic encoder; check table, JSON, PNG and values against independent expectations."""

import argparse
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interlingua.evaluation.pack.build import PackSizes, build_pack, read_manifest
from interlingua.evaluation.runner import select_tasks
from interlingua.evaluation.splits import bible_heldout_split
from interlingua.evaluation.tasks.pack_tasks import pack_task_specs
from interlingua.workflows.commands import bench_pack as bench_pack_command
from interlingua.workflows.commands import eval as eval_command

FAKE_ENCODER_MODULE = r'''
import re, zlib
import numpy as np

class HashedNumbers:
    """One-hot of each number (its value mod 4000) plus a weak hashed word signal; 4096 dims."""
    name = "hashed-numbers"
    def encode(self, texts):
        out = np.zeros((len(texts), 4096))
        for row, text in enumerate(texts):
            for token in re.findall(r"\w+", text.lower()):
                if token.isdigit():
                    out[row, int(token) % 4000] += 10.0
                else:
                    out[row, 4000 + zlib.crc32(token.encode()) % 96] += 0.1
        return out

def make():
    return HashedNumbers()
'''


def _parquet(path, columns):
    pq.write_table(pa.table(columns), path)


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    root = tmp_path_factory.mktemp("assets")
    ids = [f"Gen.{c}.{v}" for c in range(1, 21) for v in range(1, 31)]
    _parquet(root / "bible-en-es.parquet", {"id": ids, "book": ["Gen"] * len(ids),
                                            "en": [f"verse {i} in english words" for i in range(len(ids))],
                                            "es": [f"versiculo {i} en palabras" for i in range(len(ids))]})
    for lang in ("de", "fr", "es"):
        n = 40
        _parquet(root / f"debian-reference-en-{lang}.parquet", {
            "id": [f"p{i}" for i in range(n)], "section": ["s"] * n,
            "en": [f"Paragraph number {1000 + i} explains the apt package manager." for i in range(n)],
            "tgt": [f"Absatz {lang} {1000 + i} erklärt die Paketverwaltung apt." for i in range(n)]})
    return root


@pytest.fixture(scope="module")
def pack(assets, tmp_path_factory):
    out = tmp_path_factory.mktemp("pack")
    sizes = PackSizes(bible_pairs=1000, debian_pairs=10, mining_gold_per_split=5, mining_orphans_per_side=3,
                      mining_distractors_per_side=4, clustering_items=24, title_lead_pairs=8)
    build_pack(assets, out, sizes, seed=0)
    return out


def test_pack_manifest_and_heldout_bible(pack, assets):
    manifest = read_manifest(pack)
    names = [t["name"] for t in manifest["tasks"]]
    assert names == ["bible_retrieval", "debian_retrieval_de", "debian_mining_de", "debian_retrieval_fr", "debian_mining_fr",
                     "debian_retrieval_es", "debian_mining_es", "wiki_clustering_en", "wiki_clustering_fr", "wiki_clustering_es",
                     "wiki_title_lead_fr", "wiki_title_lead_es"]
    all_ids = pq.read_table(assets / "bible-en-es.parquet").column("id").to_pylist()
    bible_ids = pq.read_table(pack / "bible_retrieval.parquet").column("id").to_pylist()
    assert bible_ids == [i for i, held in zip(all_ids, bible_heldout_split(all_ids)) if held]
    mining = pq.read_table(pack / "debian_mining_fr.parquet").to_pydict()
    gold = pq.read_table(pack / "debian_mining_fr_gold.parquet").to_pydict()
    sample_src = [i for i, s, d in zip(mining["id"], mining["split"], mining["side"]) if s == "sample" and d == "src"]
    assert len(sample_src) == 5 + 3 + 4 and gold["split"].count("sample") == 5 and gold["split"].count("test") == 5
    assert len(set(mining["id"])) == len(mining["id"])
    de = pq.read_table(pack / "debian_mining_de.parquet").to_pydict()
    assert sum(1 for s, d in zip(de["split"], de["side"]) if s == "sample" and d == "src") == 5 + 3  # no German distractors


def test_select_tasks(pack):
    assert [t.name for t in select_tasks(pack_task_specs(pack), ["debian_mining"])] == ["debian_mining_de", "debian_mining_fr", "debian_mining_es"]
    assert len(select_tasks(pack_task_specs(pack), ["clustering", "bible_retrieval"])) == 4
    with pytest.raises(ValueError, match="matches nothing"):
        select_tasks(pack_task_specs(pack), ["sts17"])


def test_bench_pack_command_reports_skipped(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    bench_pack_command.add_arguments(parser)
    (tmp_path / "empty").mkdir()  # an assets folder without the Bible or debian-reference files
    args = parser.parse_args(["--assets", str(tmp_path / "empty"), "--out", str(tmp_path / "p"), "--clustering-items", "10",
                              "--title-lead-pairs", "5"])
    assert bench_pack_command.run(args) == 0
    assert "skipped bible_retrieval" in capsys.readouterr().err


def test_eval_cli_on_fake_encoder(pack, tmp_path, monkeypatch, capsys):
    (tmp_path / "fake_eval_encoder.py").write_text(FAKE_ENCODER_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    parser = argparse.ArgumentParser()
    eval_command.add_arguments(parser)
    out = tmp_path / "out"
    args = parser.parse_args(["--model", "py:fake_eval_encoder:make,concat(py:fake_eval_encoder:make|py:fake_eval_encoder:make)",
                              "--tasks", "bible_retrieval,debian_mining_fr,wiki_clustering_es", "--seeds", "1,2",
                              "--pack", str(pack), "--out", str(out)])
    assert eval_command.run(args) == 0
    table = capsys.readouterr().out
    assert "bible_retrieval" in table and "wiki_clustering_es" in table and "100.00 ± 0.00" in table
    document = json.loads((out / "results.json").read_text())
    summary = {(s["model"], s["task"], s["metric"]): s for s in document["summary"]}
    bible = summary[("py:fake_eval_encoder:make", "bible_retrieval", "accuracy")]
    assert (bible["mean"], bible["std"], bible["n"]) == (100.0, 0.0, 2)
    # concatenating an encoder with itself leaves every cosine unchanged -> identical numbers
    for (model, task, metric), entry in summary.items():
        if model.startswith("concat"):
            assert entry["mean"] == pytest.approx(summary[("py:fake_eval_encoder:make", task, metric)]["mean"])
    assert (out / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert any((out / "embedding-cache").rglob("part-*.npz"))


def test_eval_cli_bad_seed_list():
    parser = argparse.ArgumentParser()
    eval_command.add_arguments(parser)
    with pytest.raises(SystemExit):
        parser.parse_args(["--model", "use", "--seeds", "1,x"])
    for bad, reason in (("1,1,2", "more than once"), ("-1", "from 0 to"), (str(2**31), "from 0 to")):
        with pytest.raises(argparse.ArgumentTypeError, match=reason):  # a repeated seed would weigh double
            eval_command._int_list(bad)
    assert parser.parse_args(["--model", "use", "--seeds", "0,2,1"]).seeds == [0, 2, 1]


def test_pack_reads_the_layout_interlingua_assets_writes(assets, tmp_path):
    """`interlingua assets` puts the Bible under bible/ and the guide under debian-reference/."""
    import shutil

    layout = tmp_path / "state-assets"
    (layout / "bible").mkdir(parents=True)
    (layout / "debian-reference").mkdir()
    shutil.copy(assets / "bible-en-es.parquet", layout / "bible")
    for lang in ("de", "fr", "es"):
        shutil.copy(assets / f"debian-reference-en-{lang}.parquet", layout / "debian-reference")
    flat = build_pack(assets, tmp_path / "flat", PackSizes(bible_pairs=10, debian_pairs=10, mining_gold_per_split=5,
                                                            mining_orphans_per_side=2, mining_distractors_per_side=5,
                                                            clustering_items=20, title_lead_pairs=10))
    nested = build_pack(layout, tmp_path / "nested", PackSizes(**flat["sizes"]))
    assert nested["skipped"] == [] == flat["skipped"]
    assert [t["name"] for t in nested["tasks"]] == [t["name"] for t in flat["tasks"]]
    for name in ("bible_retrieval", "debian_retrieval_de", "debian_mining_fr_gold"):
        assert pq.read_table(tmp_path / "nested" / f"{name}.parquet").equals(
            pq.read_table(tmp_path / "flat" / f"{name}.parquet"))


def test_eval_cli_masks_credentials_in_a_model_spec(pack, tmp_path, monkeypatch, capsys):
    from interlingua.models import resolve

    (tmp_path / "fake_eval_encoder.py").write_text(FAKE_ENCODER_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import fake_eval_encoder

    secret = "https://reader:hunter2@models.example.org/enc?token=abc123"
    monkeypatch.setattr(resolve, "resolve_encoder", lambda spec, wrap_leaf=None: fake_eval_encoder.make())
    parser = argparse.ArgumentParser()
    eval_command.add_arguments(parser)
    out = tmp_path / "out"
    args = parser.parse_args(["--model", secret, "--tasks", "bible_retrieval", "--seeds", "1", "--pack", str(pack),
                              "--out", str(out)])
    assert eval_command.run(args) == 0
    shown = capsys.readouterr()
    written = (out / "results.json").read_text() + (out / "results.txt").read_text()
    for text in (shown.out, shown.err, written):
        assert "hunter2" not in text and "abc123" not in text
    models = {s["model"] for s in json.loads((out / "results.json").read_text())["summary"]}
    assert models == {"https://***@models.example.org/enc?token=***"}
