"""Known workflows: name -> module.

A workflow module defines ``CONFIG`` (a :class:`~interlingua.core.config.Config` subclass),
``DESCRIPTION`` (one line) and ``run(config, *, address=None) -> dict`` returning a summary; :data:`OUTPUTS`
declares that summary's keys, which a recipe's ``${stages.NAME.OUTPUT}`` may name. It may define
``preflight(config)``: the checks across its config that need no cluster, run by every command that takes the
config (``run`` and its ``--show-config``, ``submit`` and its ``--dry-run``), see :func:`preflight`; and
``environment_preflight(config)``: the checks of what the machine running the work must have (an installed program, a
model folder), run with it only when that machine is this one (its ``run`` checks a cluster on the cluster, and this
machine only when no command checked the same config just before: :mod:`~interlingua.core.checked_once`); and
``input_preflight(config)``: the checks of the files on this machine that the config names for the run to read (found,
not empty), no URL (no network) and no asset an earlier recipe stage may build, run with ``environment_preflight``
(its ``run`` checks them, URLs too, itself). So a recipe refuses a later stage's missing input before it starts.
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


_CORPUS = ("corpus", "version", "rows", "rejects", "languages")  # a published bitext source's summary
_ENCODER = ("run_id", "model", "model_uri", "model_version", "encoder_dir", "corpus_versions", "languages",
            "evaluation", "seconds")  # a registered, evaluated encoder's

#: workflow -> the outputs of its summary as a recipe's references see them (``stage_outputs``: the keys ``run``
#: returns, plus ``version`` split from a ``NAME@VERSION`` corpus and ``model`` from ``model_uri``). A test compares
#: each with what ``run`` returns.
OUTPUTS: dict[str, frozenset[str]] = {name: frozenset(keys) for name, keys in {
    "quickstart": ("run_id", "model", "model_uri", "summary"),
    "amr-corpus": ("corpus", "version", "rows", "rejects", "nli", "shards_total", "shards_resumed"),
    "amr-retrofit": ("run_id", "model", "model_uri", "model_version", "base_model", "corpus", "version", "languages",
                     "triples", "triples_skipped", "mixing_passes", "inputs", "symbols_added", "symbols",
                     "extended_encoder",
                     "final_loss", "train_metrics", "seconds"),
    "ease-corpus": ("corpus", "version", "entities", "entity_id_source", "funnel", "funnel_by_lang", "dump_issues"),
    "bitext-corpus": ("corpus", "version", "rows", "rejects", "input_rows", "shards_total", "shards_reused",
                      "shards_resumed", "parameters", "rejects_by_reason", "counters", "lost_race"),
    "meaning-head": ("run_id", "model", "model_uri", "base_model", "pairs", "results", "epochs"),  # model*: when registered
    "absent": ("run_id", "results", "chart", "pairs", "test_pairs", "rejects_by_reason"),
    "bible-bitext": (*_CORPUS, "heldout"),
    "apertium-bitext": (*_CORPUS, "seconds"),
    "gettext-bitext": (*_CORPUS, "seconds"),
    "wiki-title-lead": (*_CORPUS, "seconds"),
    "corpus-mix": ("corpus", "version", "rows", "sources", "languages", "seconds"),
    "hard-negatives": (*_CORPUS, "seconds"),
    "train": (*_ENCODER, "base_model", "corpus", "version", "objective", "rows", "word_retrieval", "train_metrics"),
    "combine": ("run_id", "model", "encoder_dir", "dim", "corpus_versions", "languages", "evaluation", "seconds"),
    "interpolate": (*_ENCODER, "first", "second", "alpha"),
}.items()}


class UnknownWorkflow(UserError):
    def __init__(self, name: str):
        super().__init__(f"unknown workflow {name!r}; known workflows: {', '.join(sorted(WORKFLOWS))}")


def load_workflow(name: str) -> ModuleType:
    if name not in WORKFLOWS:
        raise UnknownWorkflow(name)
    return importlib.import_module(WORKFLOWS[name])


def preflight(workflow: ModuleType, config, *, settings: bool = True, machine: bool = True) -> None:
    """The workflow's own checks of a validated config: with ``settings`` its ``preflight``, with ``machine`` its
    ``environment_preflight`` and ``input_preflight`` of this machine (off where the work runs on a cluster — a
    submitted job, ``--address`` — or not at all — ``--show-config``): a :class:`UserError` before anything runs or is
    sent."""
    from interlingua.core.checked_once import check_before_run, forget_checks

    try:
        if settings and getattr(workflow, "preflight", None) is not None:
            workflow.preflight(config)
        if machine and getattr(workflow, "environment_preflight", None) is not None:
            check_before_run(workflow.environment_preflight, config)  # the run's own check of this config is skipped
        if machine and getattr(workflow, "input_preflight", None) is not None:
            workflow.input_preflight(config)
    except BaseException:  # a preflight that failed stands for nothing: a later run of this config checks it all
        forget_checks()
        raise


#: The checks a workflow module may define, which :func:`preflight` runs.
CHECK_HOOKS = ("preflight", "environment_preflight", "input_preflight")
