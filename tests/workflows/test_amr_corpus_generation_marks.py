"""amr-corpus's translation (beam_size / max_length unset: the Marian folder's generation config, were 4 / 256) and
its parser (no n-gram blocking, amrlib early stopping) generate otherwise than the code that built earlier versions:
such configs get another version id, refresh line and recipe stage hash, so a rerun never reopens or resumes an old
version; an Apertium-only config without a parser keeps its id."""

from __future__ import annotations

import pytest

from interlingua.models.identity import with_model_files
from interlingua.operators.corpus.store import CorpusStore
from interlingua.workflows import amr_corpus
from interlingua.workflows.amr_corpus import AmrCorpusConfig

MARKED = {
    "marian, folder's generation": ({"languages": ["de"]}, {"translate_generation": {"de": "folder"}}),
    "ctranslate2, max_length unset": (
        {"translate": {"es": {"backend": "ctranslate2", "beam_size": 4}}}, {"translate_generation": {"es": "folder"}}),
    "parser": ({"parser_model": "org/amr-parser"}, {"parser_generation": 2}),
}
UNMARKED = {
    "apertium, no parser": {},
    "marian with beam_size and max_length": {"languages": ["de"], "translate": {"de": {"beam_size": 4, "max_length": 256}}},
}


class Opened(Exception):
    """Raised in place of opening the version: carries the config its id would hash."""


def _version_config(tmp_path, monkeypatch, data: dict) -> dict:
    def open_version(self, name, config, inputs, **kwargs):
        raise Opened(config)

    monkeypatch.setattr(amr_corpus, "environment_preflight", lambda config: None)  # no Apertium / model folders here
    monkeypatch.setattr(CorpusStore, "open_version", open_version)
    config = AmrCorpusConfig(**data, store_root=str(tmp_path / "store"))
    with pytest.raises(Opened) as opened:
        amr_corpus.run(config)
    return opened.value.args[0]


@pytest.mark.parametrize("name", sorted(MARKED))
def test_a_config_whose_output_changed_gets_another_version_config(tmp_path, monkeypatch, name):
    data, marks = MARKED[name]
    config = AmrCorpusConfig(**data)
    before = with_model_files(amr_corpus._versioned(config))  # what the version id hashed before
    assert _version_config(tmp_path, monkeypatch, data) == {**before, **marks}
    assert amr_corpus.stage_marks(config.model_dump()) == amr_corpus.stage_marks(data) == marks  # dumped or as written


@pytest.mark.parametrize("name", sorted(UNMARKED))
def test_a_config_whose_output_did_not_change_keeps_its_version_config(tmp_path, monkeypatch, name):
    data = UNMARKED[name]
    before = with_model_files(amr_corpus._versioned(AmrCorpusConfig(**data)))
    assert _version_config(tmp_path, monkeypatch, data) == before
    assert amr_corpus.stage_marks(data) == {}


def test_the_marks_enter_a_refresh_line_and_a_recipe_stage_hash():
    from interlingua.workflows.recipe_spec import stage_payload
    from interlingua.workflows.refresh import _ADAPTERS

    adapter = _ADAPTERS["amr-corpus"]
    for data, marks in MARKED.values():
        assert adapter.spec_config(AmrCorpusConfig(**data)).items() >= marks.items()
        assert stage_payload("amr-corpus", data) == {"workflow": "amr-corpus", "config": data, "marks": marks}
    for data in UNMARKED.values():
        line = adapter.spec_config(AmrCorpusConfig(**data))
        assert "translate_generation" not in line and "parser_generation" not in line
        assert stage_payload("amr-corpus", data) == {"workflow": "amr-corpus", "config": data}
