"""Checking a refresh spec (``load_spec``: refresh, schedule, submit refresh) makes no state folder: the default store
root under it is not worked out there (2ddca76's URL check asked ``corpus_root()``, which made the folder)."""

from __future__ import annotations

import pytest

from interlingua.workflows.refresh import load_spec

SPECS = {
    "bitext-corpus": "workflow: bitext-corpus\ninputs: ['{tmp}/pairs.tsv']\n"
                     "config: {{src_lang: en, tgt_lang: es, corpus_name: c}}\n",
    "amr-corpus": "workflow: amr-corpus\nconfig: {{corpus_name: c}}\n",
}


@pytest.mark.parametrize("workflow", sorted(SPECS))
def test_a_spec_without_a_store_root_is_checked_without_making_the_state_folder(workflow, tmp_path, monkeypatch):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPECS[workflow].format(tmp=tmp_path), encoding="utf-8")
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home-typo"))
    assert load_spec(str(spec)).workflow == workflow
    assert not (tmp_path / "home-typo").exists()
    monkeypatch.setenv("INTERLINGUA_HOME", "/proc/interlingua-cannot-exist")  # was "state folder ... cannot be created"
    assert load_spec(str(spec)).workflow == workflow
