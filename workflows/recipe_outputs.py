"""A recipe's state (``<state>/recipes/NAME/state.json``) read back: each entry and each output checked before reuse.

The state folder may be shared, so a stage the state records as finished is a claim: its outputs are substituted
into later stages' configs (a ``model`` reaches the encoder resolver, a ``corpus`` the store), and a forged
``model: "py:os:system"`` would run code. So every output a skipped stage hands on must be one its workflow declares
(:data:`~interlingua.workflows.registry.OUTPUTS`) and have the shape that workflow gives it (:data:`SHAPES`,
:data:`MODEL_SHAPES`): ``model`` a pinned ``models:/NAME/VERSION`` (a folder for ``combine``; for ``meaning-head``
the pinned version, or ``runs:/RUN_ID/encoder`` over a spec base), ``corpus`` a safe corpus name, ``version`` ``v-<hex>``, counts and timings numbers only,
…; a ``py:`` spec only where the stage's own config holds that very spec. So must the outputs a stage's entry
records as ``finished`` (its workflow finished, its model not pinned yet: ``model`` may still be ``models:/NAME@ALIAS``),
which a rerun pins and hands on. A value that does not fit is refused in
one line naming the state file and the key, with the way out (delete the entry, or force the stage).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interlingua.core.names import alias_problem, name_problem, split_corpus_ref
from interlingua.models.registry_uri import RegistryURI, parse_registry_uri
from interlingua.workflows.recipe_spec import RecipeError, key_stage

_MODEL_NAME = r"[^/@|()\x00-\x1f]+"  # a registered model's name: no part of a spec's syntax
_PINNED = re.compile(rf"models:/{_MODEL_NAME}/[0-9]+")
_RUN_ID = re.compile(r"[0-9a-f]{32}")
_RUN_ENCODER = re.compile(r"runs:/[0-9a-f]{32}/encoder")  # a meaning head over a spec base
_CORPUS_VERSION = re.compile(r"v-[0-9a-f]{1,64}")
_URL = re.compile(r"[a-z][a-z0-9+.-]*://")


@dataclass(frozen=True)
class Shape:
    """What an output's value must be: ``check(value, own)`` (``own``: the ``py:`` specs the stage's own config
    holds, the only ones a value may be), said as ``description``."""

    description: str
    check: Callable[[Any, frozenset[str]], bool]


def _line(value: Any) -> bool:
    return isinstance(value, str) and bool(value) and not re.search(r"[\x00-\x1f]", value)


def _no_factory(value: str, own: frozenset[str]) -> bool:
    from interlingua.models.resolve import factory_spans

    return value in own or not factory_spans(value)


def _corpus(value: Any) -> bool:
    return isinstance(value, str) and not name_problem(value)


def _corpus_ref(value: Any) -> bool:
    name, version = split_corpus_ref(value) if isinstance(value, str) else ("", None)
    return _corpus(name) and (not version or bool(_CORPUS_VERSION.fullmatch(version)))


def aliased_model(value: Any) -> RegistryURI | None:
    """The parts of a ``models:/NAME@ALIAS`` (nothing after the alias; NAME and ALIAS free of a spec's syntax); None
    for any other value."""
    uri = parse_registry_uri(value) if isinstance(value, str) else None
    if uri is None or value != f"models:/{uri.name}@{uri.alias}":
        return None
    return uri if all(re.fullmatch(_MODEL_NAME, part) for part in (uri.name, uri.alias)) else None


def _registered(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    aliased = aliased_model(value)
    return bool(_PINNED.fullmatch(value)) or (aliased is not None and not alias_problem(aliased.alias))


def _numbers(value: Any) -> bool:
    """Numbers, booleans and None, alone or in lists and mappings: nothing a later stage could read as a name."""
    if value is None or isinstance(value, (bool, int, float)):
        return True
    if isinstance(value, list):
        return all(_numbers(item) for item in value)
    return isinstance(value, dict) and all(isinstance(k, str) and _numbers(v) for k, v in value.items())


RUN_ID = Shape("an MLflow run id (32 hex digits)", lambda v, own: isinstance(v, str) and bool(_RUN_ID.fullmatch(v)))
PINNED_MODEL = Shape("a pinned registered model, models:/NAME/VERSION",
                     lambda v, own: isinstance(v, str) and bool(_PINNED.fullmatch(v)))
REGISTERED = Shape("a registered model, models:/NAME/VERSION or models:/NAME@ALIAS", lambda v, own: _registered(v))
PUBLISHED_HEAD = Shape("a pinned registered model, models:/NAME/VERSION, or runs:/RUN_ID/encoder",
                       lambda v, own: isinstance(v, str) and (bool(_PINNED.fullmatch(v)) or bool(_RUN_ENCODER.fullmatch(v))))
MODEL_VERSION = Shape("a model version number", lambda v, own: (isinstance(v, int) and not isinstance(v, bool) and v > 0)
                      or (isinstance(v, str) and v.isascii() and v.isdigit()))
CORPUS = Shape("a corpus name (letters, digits, '.', '_', '-')", lambda v, own: _corpus(v))
CORPUS_VERSION = Shape("a corpus version, v-<hex>", lambda v, own: isinstance(v, str) and bool(_CORPUS_VERSION.fullmatch(v)))
CORPUS_REF = Shape("a corpus, NAME or NAME@v-<hex>", lambda v, own: _corpus_ref(v))
CORPUS_REFS = Shape("a list of corpora, NAME@v-<hex>", lambda v, own: isinstance(v, list) and all(map(_corpus_ref, v)))
PATH = Shape("an absolute path or URL on one line, no py: spec",
             lambda v, own: _line(v) and (os.path.isabs(v) or bool(_URL.match(v))) and _no_factory(v, own))
SPEC = Shape("an encoder spec on one line (a py: spec only as the stage's own config gives it)",
             lambda v, own: _line(v) and _no_factory(v, own))
NUMBERS = Shape("numbers (alone, or in lists and mappings)", lambda v, own: _numbers(v))
DATA = Shape("JSON data", lambda v, own: True)  # text a reference may hand on is still refused if it holds a py: spec

#: output name -> its shape, for every output a workflow declares (a test keeps it complete).
SHAPES: dict[str, Shape] = {
    "run_id": RUN_ID, "model": PINNED_MODEL, "model_uri": REGISTERED, "model_version": MODEL_VERSION,
    "base_model": SPEC, "first": SPEC, "second": SPEC,
    "corpus": CORPUS, "version": CORPUS_VERSION, "entities": CORPUS_REF, "sources": CORPUS_REFS,
    "encoder_dir": PATH, "extended_encoder": PATH, "results": PATH, "chart": PATH, "summary": PATH,
    "objective": SPEC, "entity_id_source": SPEC,
    **dict.fromkeys(("rows", "rejects", "input_rows", "shards_total", "shards_reused", "shards_resumed", "pairs",
                     "test_pairs", "triples", "triples_skipped", "symbols_added", "dim", "alpha", "final_loss",
                     "seconds", "train_metrics", "epochs", "inputs", "funnel", "funnel_by_lang", "rejects_by_reason",
                     "lost_race", "heldout", "mixing_passes"), NUMBERS),
    **dict.fromkeys(("evaluation", "word_retrieval", "dump_issues", "languages", "symbols", "corpus_versions",
                     "parameters", "nli", "counters"), DATA),
}
#: workflow -> the shape of its ``model`` where it is not a pinned registered version.
MODEL_SHAPES: dict[str, Shape] = {"combine": PATH, "meaning-head": PUBLISHED_HEAD}


def checked_stages(stages: Any, state_file: Path) -> dict[str, dict[str, Any]]:
    """The ``stages`` of a state file when it is a mapping of mappings; :class:`RecipeError` otherwise."""
    if not isinstance(stages, dict):
        raise RecipeError(f"recipe state {state_file}: stages: a {type(stages).__name__}, not a mapping of stages "
                          "(hint: delete the file to start over)")
    for key, entry in stages.items():
        if not isinstance(entry, dict):
            raise _refusal(state_file, key, f"stages.{key}", f"a {type(entry).__name__}, not a mapping")
    return stages


def checked_entry(entry: dict[str, Any], *, workflow: str, key: str, state_file: Path, config: dict[str, Any],
                  done: bool) -> dict[str, Any]:
    """``entry`` (``state[key]``, a stage running ``workflow`` with resolved ``config``) when it fits: its ``run_id``
    a run id, its ``finished`` (what the workflow gave before its model was pinned), where it has one, and, when
    ``done``, its ``outputs`` the declared outputs of ``workflow``, each of its shape (``finished``'s ``model`` may be
    a ``models:/NAME@ALIAS`` still); :class:`RecipeError` naming ``state_file`` and the key otherwise."""
    if not RUN_ID.check(entry.get("run_id"), frozenset()):
        raise _refusal(state_file, key, f"stages.{key}.run_id", f"{_shown(entry.get('run_id'))} is not "
                       f"{RUN_ID.description}")
    own = frozenset(_texts(config))
    if "finished" in entry:
        _check_outputs(entry["finished"], "finished", workflow, key, state_file, own, pinned=False)
    if done:
        _check_outputs(entry.get("outputs"), "outputs", workflow, key, state_file, own, pinned=True)
    return entry


def _check_outputs(outputs: Any, field: str, workflow: str, key: str, state_file: Path, own: frozenset[str], *,
                   pinned: bool) -> None:
    """``outputs`` (an entry's ``field``) the declared outputs of ``workflow``, each of its shape; ``pinned``: its
    ``model`` pinned already."""
    from interlingua.workflows.registry import OUTPUTS

    if not isinstance(outputs, dict):
        raise _refusal(state_file, key, f"stages.{key}.{field}", f"{_shown(outputs)} is not a mapping of outputs")
    declared = OUTPUTS[workflow]
    for output, value in outputs.items():
        where = f"stages.{key}.{field}.{output}"
        if output not in declared:
            raise _refusal(state_file, key, where, f"{workflow} gives no output {output!r}")
        shape = MODEL_SHAPES.get(workflow, PINNED_MODEL) if output == "model" else SHAPES.get(output, DATA)
        if output == "model" and not pinned:
            shape = _or_aliased(shape)
        if not shape.check(value, own):
            raise _refusal(state_file, key, where,
                           f"{_shown(value)} is not what {workflow} gives ({shape.description})")


def _or_aliased(shape: Shape) -> Shape:
    """A ``model`` of ``shape``, or the ``models:/NAME@ALIAS`` a recipe pins once its stage's workflow finished."""
    return Shape(f"{shape.description}, or models:/NAME@ALIAS before it is pinned",
                 lambda v, own: shape.check(v, own) or REGISTERED.check(v, own))


def _refusal(state_file: Path, key: str, where: str, problem: str) -> RecipeError:
    return RecipeError(f"recipe state {state_file}: {where}: {problem} (hint: delete the entry {key!r} from that "
                       f"file, or rerun with --set force=[{key_stage(key)}])")


def _texts(value: Any):
    """Every string inside ``value`` (the stage's own config)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def _shown(value: Any) -> str:
    from interlingua.core.redact import redact_text

    return redact_text(repr(value))[:120]
