"""The hints of ``run train``'s corpus refusals name what to run: the corpus workflow that builds a missing corpus,
and the bitext-corpus build of word pairs for a corpus without them."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from interlingua.core.errors import UserError
from interlingua.operators.corpus.store import CorpusStore
from interlingua.workflows.train import TrainWorkflowConfig, _manifest, check_columns
from interlingua.workflows.word_retrieval_check import BUILD_WORD_PAIRS


@pytest.mark.parametrize(("corpus", "workflow"), [("apertium-bitext", "apertium-bitext"),
                                                   ("bible-en-es", "bible-bitext"),  # its default corpus name
                                                   ("ease-entities", "ease-corpus"),
                                                   ("my-own", "<corpus workflow>")])
def test_a_missing_corpus_names_the_workflow_that_builds_it(tmp_path, corpus, workflow):
    """The hint ended in a literal 'interlingua run ...'."""
    with pytest.raises(UserError) as err:
        _manifest(CorpusStore(str(tmp_path / "corpus")), corpus, None)
    assert str(err.value).endswith(f"(build it first with its corpus workflow: interlingua run {workflow})")


def test_a_bitext_without_word_pairs_for_explicit_alignment_gets_the_bitext_corpus_hint():
    """It got only the generic 'map a column' hint, where README promises the bitext-corpus build."""
    plain = SimpleNamespace(name="bible-en-es", version="v-1", columns=["id", "src", "tgt"])
    config = TrainWorkflowConfig(corpus="bible-en-es", train={"objective": "explicit_alignment"})
    with pytest.raises(UserError) as err:
        check_columns(config, plain)
    assert f"; build one with word pairs: {BUILD_WORD_PAIRS}, choose another corpus or objective" in str(err.value)
    config = TrainWorkflowConfig(corpus="bible-en-es", train={"objective": "simcse_unsup"})
    with pytest.raises(UserError) as err:
        check_columns(config, SimpleNamespace(name="c", version="v-1", columns=["id"]))
    assert "word pairs" not in str(err.value)
