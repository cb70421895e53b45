"""The ``interlingua refresh`` command line: ``--json`` output, the spec's config errors (no Ray: the build is
replaced by one that publishes a one-shard version)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from interlingua.operators.corpus import CorpusStore, Lineage
from interlingua.workflows import refresh as refresh_module
from interlingua.workflows.cli import main


def _write_spec(tmp_path: Path, config: str, keep_versions: int | None = None) -> Path:
    (tmp_path / "in").mkdir(exist_ok=True)
    (tmp_path / "in" / "a.tsv").write_text("the house\tdas haus\n", encoding="utf-8")
    spec = tmp_path / "bt-refresh.yaml"
    spec.write_text(f"workflow: bitext-corpus\ninputs: ['{tmp_path}/in/*.tsv']\nconfig: {config}\n"
                    + (f"keep_versions: {keep_versions}\n" if keep_versions is not None else ""), encoding="utf-8")
    return spec


def _one_shard_build(spec, plan, config, store, address):
    """What the adapter's build leaves: a published version of the plan's inputs, after a stage line on stdout."""
    print("[bitext-corpus] write shards ...", flush=True)
    writer = store.open_version(plan.corpus, plan.spec_config, plan.urls, input_fingerprints=plan.fingerprints,
                                lineage=Lineage(spec_config_hash=plan.spec_config_hash, mode=plan.mode))
    writer.write_shard("s0", pa.table({"src": ["the house"], "tgt": ["das haus"]}))
    return {"version": writer.publish().version}


def test_refresh_json_prints_one_json_document_with_the_retention_as_data(tmp_path: Path, monkeypatch, capsys):
    """--json printed the summary lines and the stages' lines before the JSON (json.loads of stdout failed), and
    its retention was the printed text, line breaks and all."""
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")  # retention asks the registry
    store = CorpusStore(str(tmp_path / "store"))
    older = []
    for k in range(2):
        writer = store.open_version("bt", {"k": k}, ["x"])
        writer.write_shard("s0", pa.table({"id": [str(k)]}))
        older.append(writer.publish().version)
    store.pin("bt", older[0])
    monkeypatch.setattr(refresh_module._ADAPTERS["bitext-corpus"], "build", _one_shard_build)
    spec = _write_spec(tmp_path, f"{{corpus_name: bt, store_root: '{tmp_path}/store', src_lang: en, tgt_lang: de}}",
                       keep_versions=1)

    assert main(["refresh", str(spec), "--json"]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)
    new = summary["version"]
    assert summary["published"] is True and new not in older
    assert summary["retention"] == {"keep_last": 1, "dry_run": False, "deleted": [older[1]],
                                    "kept": {older[0]: "pinned", new: "latest"}, "referenced_by": {}}
    assert f"published bt/{new}" in err and "[bitext-corpus] write shards" in err and f"kept {older[0]}: pinned" in err
    assert store.versions("bt") == [older[0], new]


def test_refresh_without_json_prints_its_lines_on_stdout(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setattr(refresh_module._ADAPTERS["bitext-corpus"], "build", _one_shard_build)
    spec = _write_spec(tmp_path, f"{{corpus_name: bt, store_root: '{tmp_path}/store', src_lang: en, tgt_lang: de}}")
    assert main(["refresh", str(spec)]) == 0
    out = capsys.readouterr().out
    assert "refresh bt: 1 input(s) added" in out and "published bt/" in out


def test_an_error_in_the_specs_config_names_the_spec_file(tmp_path: Path, capsys):
    """It named "(refresh spec config)", where the spec's other errors name the file."""
    spec = _write_spec(tmp_path, "{corpus_name: bt, src_lang: english, tgt_lang: de}")
    assert main(["refresh", str(spec)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[interlingua]")]
    assert len(err) == 1 and err[0].startswith(
        f"interlingua refresh: error: invalid config ({spec}, under config): src_lang = 'english': ")
