"""Known workflows: name -> module.

A workflow module defines ``CONFIG`` (a :class:`~interlingua.core.config.Config` subclass),
``DESCRIPTION`` (one line) and ``run(config, *, address=None) -> dict`` returning a summary.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from interlingua.core.errors import UserError

WORKFLOWS: dict[str, str] = {
    "quickstart": "interlingua.workflows.quickstart",
    "amr-corpus": "interlingua.workflows.amr_corpus",
    "amr-retrofit": "interlingua.workflows.amr_retrofit",
    "ease-corpus": "interlingua.workflows.ease_corpus",
    "bitext-corpus": "interlingua.workflows.bitext_corpus",
    "meaning-head": "interlingua.workflows.meaning_head",
    "absent": "interlingua.workflows.absent",
    "bible-bitext": "interlingua.workflows.bible_bitext",
    "apertium-bitext": "interlingua.workflows.apertium_bitext",
    "gettext-bitext": "interlingua.workflows.gettext_bitext",
    "wiki-title-lead": "interlingua.workflows.wiki_title_lead",
    "corpus-mix": "interlingua.workflows.corpus_mix",
    "hard-negatives": "interlingua.workflows.hard_negatives",
    "train": "interlingua.workflows.train",
    "combine": "interlingua.workflows.combine",
    "interpolate": "interlingua.workflows.interpolate",
    "recipe": "interlingua.workflows.recipe",
}


class UnknownWorkflow(UserError):
    def __init__(self, name: str):
        super().__init__(f"unknown workflow {name!r}; known workflows: {', '.join(sorted(WORKFLOWS))}")


def load_workflow(name: str) -> ModuleType:
    if name not in WORKFLOWS:
        raise UnknownWorkflow(name)
    return importlib.import_module(WORKFLOWS[name])
