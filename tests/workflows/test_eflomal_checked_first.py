"""bitext-corpus with ``aligner: eflomal`` finds a state folder its seeded binary cannot run from before it reads
any input or loads a tokenizer (it was found after both, inside the build)."""

import pytest

from interlingua.core.errors import UserError
from interlingua.workflows.cli import main

from ..operators.test_align_eflomal import binary_copies_cannot_run


@pytest.fixture()
def noexec_state(tmp_path, monkeypatch):
    """A state folder eflomal's binary cannot run from, and every input reader and the tokenizer loader refusing to
    run."""
    from interlingua.workflows import bitext_corpus

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    binary_copies_cannot_run(monkeypatch)
    for name in ("read_rows", "_load_subword_tokenizer"):
        monkeypatch.setattr(bitext_corpus, name, lambda *args, _name=name, **kwargs: pytest.fail(f"{_name} ran first"))
    (tmp_path / "a.tsv").write_text("the house\tdas haus\nthe book\tdas buch\n")
    return tmp_path


def test_a_build_checks_the_binary_before_reading_its_inputs(noexec_state, capsys, monkeypatch):
    import interlingua.operators.corpus.input_fingerprints as input_fingerprints

    monkeypatch.setattr(input_fingerprints, "build_fingerprints", lambda *args: pytest.fail("inputs hashed first"))
    code = main(["run", "bitext-corpus", "--set", f"source={noexec_state / 'a.tsv'}", "--set", "aligner=eflomal",
                 "--set", f"store_root={noexec_state / 'store'}"])
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[interlingua]")]
    assert code == 2 and len(err) == 1 and "cannot run eflomal's seeded binary" in err[0], err


def test_a_refresh_checks_the_binary_before_reading_its_inputs(noexec_state, monkeypatch):
    """A refresh hashed every input (to know whether anything is new) before it checked: it checks first now."""
    import interlingua.operators.corpus.input_fingerprints as input_fingerprints
    from interlingua.workflows.refresh import RefreshSpec, refresh

    monkeypatch.setattr(input_fingerprints, "build_fingerprints", lambda *args: pytest.fail("inputs hashed first"))
    spec = RefreshSpec(workflow="bitext-corpus", inputs=[str(noexec_state / "a.tsv")], config={
        "corpus_name": "bt", "store_root": str(noexec_state / "store"), "workers": 1, "aligner": "eflomal"})
    with pytest.raises(UserError, match="cannot run eflomal's seeded binary"):
        refresh(spec, log=lambda line: None)
