"""The hints of ``run train``'s corpus refusals name what to run: the corpus workflow that builds a missing corpus,
and the bitext-corpus build of word pairs for a corpus without them."""

from __future__ import annotations

import pytest

from interlingua.core.errors import UserError
from interlingua.operators.corpus.store import CorpusStore
from interlingua.workflows.train import _manifest


@pytest.mark.parametrize(("corpus", "workflow"), [("apertium-bitext", "apertium-bitext"),
                                                   ("bible-en-es", "bible-bitext"),  # its default corpus name
                                                   ("ease-entities", "ease-corpus"),
                                                   ("my-own", "<corpus workflow>")])
def test_a_missing_corpus_names_the_workflow_that_builds_it(tmp_path, corpus, workflow):
    """The hint ended in a literal 'interlingua run ...'."""
    with pytest.raises(UserError) as err:
        _manifest(CorpusStore(str(tmp_path / "corpus")), corpus, None)
    assert str(err.value).endswith(f"(build it first with its corpus workflow: interlingua run {workflow})")
