"""A recipe: named stages, each a registered workflow with its config, chained by references.

.. code-block:: yaml

    name: tr-then-ease
    stages:
      bitext:   {workflow: apertium-bitext, config: {sentences_per_language: 2000}}
      tr:
        workflow: train
        config: {corpus: "${stages.bitext.corpus}", version: "${stages.bitext.version}",
                 train: {objective: translation_ranking}}
      ease:
        workflow: train
        config: {model: "${stages.tr.model}", corpus: ease, train: {objective: ease}}

A reference ``${stages.NAME.OUTPUT}`` is replaced by output ``OUTPUT`` of stage ``NAME`` (any key of that
workflow's summary; ``model`` is the pinned ``models:/NAME/VERSION`` of a registered encoder, ``corpus`` and
``version`` the corpus a stage built or read). A value that is exactly one reference takes the output's
value and type; references inside a longer string are interpolated. Stages run in dependency order (file
order among independent ones). :func:`validate_recipe` checks, before anything runs: known workflows,
references to existing stages and to outputs their workflows have (:data:`~interlingua.workflows.registry.OUTPUTS`),
no cycle, and each stage's config against its workflow's typed config (references stand in for any value).
Everything here is pure: no Ray, no MLflow, no store (:mod:`interlingua.workflows.recipe_corpora` checks the
corpora stages read by name).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import Field, field_validator

from interlingua.core.config import Config
from interlingua.core.errors import UserError
from interlingua.core.names import ExperimentName

REFERENCE = re.compile(r"\$\{stages\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_]+)\}")
SEED = re.compile(r"\$\{seed\}")
STAGE_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
#: A spec that is one word: no scheme (``st:``, ``models:/``), no folder (``/``), no combination.
BARE_WORD = re.compile(r"[A-Za-z0-9_.-]+")
RECIPE_WORKFLOW = "recipe"
FACTORY_RULE = ("a py: factory runs code, so it is taken only as written in a stage's config, never from a stage's "
                "output (hint: write the whole py:module:factory spec in the reading stage's config)")


class RecipeError(UserError):
    """A recipe that cannot run; the message is one line."""


class StageSpec(Config):
    workflow: str = Field(description="a registered workflow (interlingua run --help lists them)")
    config: dict[str, Any] = Field(default_factory=dict, description="the workflow's config; ${stages.X.Y} references")


class RecipeConfig(Config):
    name: str = Field(description="recipe name (its state lives in <state>/recipes/NAME)", pattern=r"^[A-Za-z0-9_.-]+$")
    description: str = ""
    experiment: ExperimentName = Field("recipe", description="MLflow experiment of the parent run and every stage's run")
    state_dir: str | None = Field(None, description="default: $INTERLINGUA_HOME or ./.interlingua")
    force: list[str] = Field(default_factory=list, description="stages to rerun even when unchanged")
    stop_after: str | None = Field(None, description="stop after this stage (run a long recipe in pieces)")
    seeds: list[int] = Field(default_factory=list, description="run every stage that uses ${seed} (directly or "
                             "through a stage it reads) once per seed; the results table gives mean ± std over seeds")
    compare: list[str] = Field(default_factory=list, description="encoder specs (e.g. use, minilm) evaluated once on "
                               "the pack of the recipe's last evaluating stage and shown beside it in the results table")
    stages: dict[str, StageSpec] = Field(min_length=1)

    @field_validator("stages")
    @classmethod
    def _names(cls, stages: dict[str, StageSpec]) -> dict[str, StageSpec]:
        bad = [name for name in stages if not STAGE_NAME.match(name)]
        if bad:
            raise ValueError(f"stage names may hold letters, digits, '-' and '_' only; got {bad}")
        return stages


def references(value: Any) -> list[tuple[str, str]]:
    """Every (stage, output) referenced anywhere inside ``value`` (strings, lists, mappings)."""
    if isinstance(value, str):
        return [(m.group(1), m.group(2)) for m in REFERENCE.finditer(value)]
    if isinstance(value, dict):
        return [ref for item in value.values() for ref in references(item)]
    if isinstance(value, (list, tuple)):
        return [ref for item in value for ref in references(item)]
    return []


def substitute(value: Any, outputs: dict[str, dict[str, Any]], seed: int | None = None) -> Any:
    """``value`` with every reference replaced by ``outputs[stage][output]`` and ``${seed}`` by ``seed``.

    A ``py:module:factory`` spec runs code, so it is honoured only as the user wrote it in the stage's config: a
    reference's value that holds one, or a ``py:`` spec that a reference's value is part of once interpolated
    (``py:${stages.x.corpus}:f``), is refused (:class:`RecipeError`)."""
    if isinstance(value, str):
        if SEED.fullmatch(value):
            return _seed(seed)
        whole = REFERENCE.fullmatch(value)
        if whole:
            return _without_factory(_output(outputs, whole.group(1), whole.group(2)), whole.group(0))
        value = SEED.sub(lambda m: str(_seed(seed)), value) if SEED.search(value) else value
        return _interpolate(value, outputs)
    if isinstance(value, dict):
        return {k: substitute(v, outputs, seed) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, outputs, seed) for v in value]
    return value


def _interpolate(text: str, outputs: dict[str, dict[str, Any]]) -> str:
    """``text`` with each reference replaced by its output's text; refused where a ``py:`` spec of the result holds a
    character a reference put there."""
    from interlingua.models.resolve import factory_spans

    pieces: list[str] = []
    inserted: list[tuple[int, int, str]] = []  # (start, end, reference) in the result
    end = 0
    for match in REFERENCE.finditer(text):
        pieces.append(text[end:match.start()])
        start = sum(map(len, pieces))
        pieces.append(str(_without_factory(_output(outputs, match.group(1), match.group(2)), match.group(0))))
        inserted.append((start, start + len(pieces[-1]), match.group(0)))
        end = match.end()
    result = "".join(pieces) + text[end:]
    for span_start, span_end in factory_spans(result):
        for start, stop, reference in inserted:
            if start < span_end and span_start < stop:
                raise RecipeError(f"{text!r}: {reference} would become part of the py: spec "
                                  f"{result[span_start:span_end].strip()!r}; {FACTORY_RULE}")
    return result


def _without_factory(value: Any, reference: str) -> Any:
    """``value`` (a reference's) when no text in it holds a ``py:`` spec; :class:`RecipeError` otherwise."""
    from interlingua.core.redact import redact_text
    from interlingua.models.resolve import factory_spans

    if isinstance(value, str) and factory_spans(value):
        raise RecipeError(f"{reference} is {redact_text(value)[:120]!r}, a py: factory spec; {FACTORY_RULE}")
    for item in (value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()):
        _without_factory(item, reference)
    return value


def _seed(seed: int | None) -> int:
    if seed is None:
        raise RecipeError("${seed} is used but the recipe has no seeds (add e.g. seeds: [1, 2, 3])")
    return seed


def uses_seed(value: Any) -> bool:
    """Whether ``${seed}`` occurs anywhere inside ``value``."""
    if isinstance(value, str):
        return bool(SEED.search(value))
    if isinstance(value, dict):
        return any(uses_seed(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(uses_seed(v) for v in value)
    return False


def seeded_stages(recipe: RecipeConfig) -> set[str]:
    """Stages that run once per seed: those using ``${seed}`` and every stage reading one of them."""
    deps = dependencies(recipe)
    seeded: set[str] = set()
    for name in execution_order(recipe):
        if uses_seed(recipe.stages[name].config) or any(dep in seeded for dep in deps[name]):
            seeded.add(name)
    return seeded


def state_key(name: str, seed: int | None) -> str:
    """Stage ``name``'s entry in a recipe's state: ``NAME``, or ``NAME.seedN`` for a stage run once per seed."""
    return name if seed is None else f"{name}.seed{seed}"


def key_stage(key: str) -> str:
    """The stage a state entry ``key`` (:func:`state_key`) belongs to (a stage name holds no '.')."""
    return key.split(".seed", 1)[0]


def _output(outputs: dict[str, dict[str, Any]], stage: str, name: str) -> Any:
    if stage not in outputs:
        raise RecipeError(f"stage {stage!r} has not run yet, so ${{stages.{stage}.{name}}} has no value")
    if name not in outputs[stage]:
        raise RecipeError(f"stage {stage!r} has no output {name!r} (its outputs: {', '.join(sorted(outputs[stage]))})")
    return outputs[stage][name]


def stage_state_dir(recipe: RecipeConfig, config: dict[str, Any]) -> Any:
    """The state folder a stage with ``config`` (as written, or with references substituted) runs with: its own
    ``state_dir`` when the config gives one, else the recipe's, as the recipe hands it on (None or "": the
    default folder)."""
    return config["state_dir"] if "state_dir" in config else recipe.state_dir


def stage_values(recipe: RecipeConfig, name: str, config_class: type[Config], outputs: dict[str, dict[str, Any]],
                 seed: int | None = None) -> dict[str, Any]:
    """Stage ``name``'s config as its workflow gets it: references and ``${seed}`` substituted, the recipe's
    ``experiment`` and state folder (:func:`stage_state_dir`) added where ``config_class`` has those keys."""
    values = substitute(recipe.stages[name].config, outputs, seed)
    if "experiment" in config_class.model_fields:
        values = {**values, "experiment": recipe.experiment}
    if "state_dir" in config_class.model_fields and (state_dir := stage_state_dir(recipe, values)):
        values = {**values, "state_dir": state_dir}
    return values


def dependencies(recipe: RecipeConfig) -> dict[str, list[str]]:
    """{stage: the stages it references, in first-reference order}; unknown stages are an error."""
    deps: dict[str, list[str]] = {}
    for name, stage in recipe.stages.items():
        refs = list(dict.fromkeys(s for s, _ in references(stage.config)))
        for ref in refs:
            if ref not in recipe.stages:
                raise RecipeError(f"stage {name!r} refers to unknown stage {ref!r} "
                                  f"(stages: {', '.join(recipe.stages)})")
            if ref == name:
                raise RecipeError(f"stage {name!r} refers to its own output")
        deps[name] = refs
    return deps


def execution_order(recipe: RecipeConfig) -> list[str]:
    """Stages in dependency order, file order among independent ones; a cycle is an error naming it."""
    deps = dependencies(recipe)
    order: list[str] = []
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "visiting":
            cycle = path[path.index(name):] + [name]
            raise RecipeError(f"recipe {recipe.name!r} has a cycle: {' -> '.join(cycle)}")
        state[name] = "visiting"
        for dep in deps[name]:
            visit(dep, path + [name])
        state[name] = "done"
        order.append(name)

    for name in recipe.stages:
        visit(name, [])
    return order


def validate_recipe(recipe: RecipeConfig) -> list[str]:
    """Check everything that can be checked before running; returns the execution order."""
    from interlingua.workflows.registry import WORKFLOWS, load_workflow

    for name, stage in recipe.stages.items():
        if stage.workflow == RECIPE_WORKFLOW:
            raise RecipeError(f"stage {name!r}: a recipe cannot run the recipe workflow")
        if stage.workflow not in WORKFLOWS:
            known = sorted(w for w in WORKFLOWS if w != RECIPE_WORKFLOW)
            raise RecipeError(f"stage {name!r}: unknown workflow {stage.workflow!r} "
                              f"({did_you_mean(stage.workflow, known)}known: {', '.join(known)})")
    unknown_forced = [s for s in [*recipe.force, recipe.stop_after] if s is not None and s not in recipe.stages]
    if unknown_forced:
        raise RecipeError(f"force/stop_after name unknown stages {unknown_forced} (stages: {', '.join(recipe.stages)})")
    order = execution_order(recipe)
    seeded = [name for name in recipe.stages if uses_seed(recipe.stages[name].config)]
    if seeded and not recipe.seeds:
        raise RecipeError(f"stages {seeded} use ${{seed}} but the recipe has no seeds (add e.g. seeds: [1, 2, 3])")
    if len(set(recipe.seeds)) != len(recipe.seeds):
        raise RecipeError(f"seeds {recipe.seeds} repeat a seed")
    check_compare(recipe)
    for name in order:
        check_references(name, recipe)
        check_factory_references(name, recipe)
        check_stage_config(name, recipe.stages[name], load_workflow(recipe.stages[name].workflow).CONFIG,
                           recipe.experiment)
    from interlingua.workflows.recipe_stage_checks import check_stages

    check_stages(recipe, order)  # each stage's own workflow checks of its settings
    return order


def check_references(name: str, recipe: RecipeConfig) -> None:
    """Every ``${stages.X.OUTPUT}`` in stage ``name``'s config names an output X's workflow declares
    (:data:`~interlingua.workflows.registry.OUTPUTS`)."""
    from interlingua.workflows.registry import OUTPUTS

    for stage, output in references(recipe.stages[name].config):
        workflow = recipe.stages[stage].workflow
        known = OUTPUTS[workflow]
        if output in known:
            continue
        raise RecipeError(f"stage {name!r}: ${{stages.{stage}.{output}}}: stage {stage!r} ({workflow}) has no output "
                          f"{output!r} ({did_you_mean(output, known)}its outputs: {', '.join(sorted(known))})")


def check_factory_references(name: str, recipe: RecipeConfig) -> None:
    """A reference that would become part of a ``py:`` spec written in stage ``name``'s config
    (``py:${stages.x.corpus}:f``), refused as :func:`substitute` refuses it when the stage runs, but before any stage
    has: each reference stands for its own text there (no ``(``, ``|`` or ``)``, so the spec is where the run's is). A
    reference whose value holds a spec is known only when it resolves (refused then)."""
    config = recipe.stages[name].config
    stand_ins: dict[str, dict[str, str]] = {}
    for stage, output in references(config):
        stand_ins.setdefault(stage, {})[output] = f"${{stages.{stage}.{output}}}"
    if not stand_ins:
        return
    try:
        substitute(config, stand_ins, seed=0)
    except RecipeError as err:
        raise RecipeError(f"stage {name!r}: {err}") from None


def check_compare(recipe: RecipeConfig) -> None:
    """A ``compare`` spec (alone or as a part of ``MODE(A|B)``) that is a bare word close to a packaged encoder's
    short name (``use``, ``minilm``) without being one, nor an existing folder, is refused with that name here
    (``usee``), not after every stage ran (as a hub id, by the hub). Any other bare word may be a hub id without an
    org (``bert-base-multilingual-cased``), and a spec with a scheme, a path or an ``org/name`` hub id is left to the
    run (offline here)."""
    from pathlib import Path

    from interlingua.models.identity import PACKAGED
    from interlingua.models.resolve import single_specs

    for spec in recipe.compare:
        try:
            parts = single_specs(spec)
        except ValueError as err:
            raise RecipeError(f"compare: {err}") from None
        for part in parts:
            if (not BARE_WORD.fullmatch(part) or part in PACKAGED or not did_you_mean(part, PACKAGED)
                    or Path(part).expanduser().exists()):
                continue
            raise RecipeError(f"compare: {part!r} is no encoder ({did_you_mean(part, PACKAGED)}short names: "
                              f"{', '.join(PACKAGED)}; else a folder, st:FOLDER, models:/NAME/VERSION or a hub id "
                              f"ORG/NAME)")


def did_you_mean(word: str, candidates) -> str:
    """``"did you mean 'X'? "`` for the candidate closest to ``word``, or ``""``."""
    from interlingua.core.config import closest

    close = closest(word, sorted(candidates))
    return f"did you mean {close!r}? " if close else ""


def check_stage_config(name: str, stage: StageSpec, config_class: type[Config], experiment: str | None = None) -> None:
    """Validate ``stage.config`` against ``config_class``; values holding references are taken on trust. With
    ``experiment`` (the recipe's), the stage gets it as the run does, so a name its workflow refuses fails here."""
    from pydantic import ValidationError

    from interlingua.core.config import _lookup, unknown_key_hint, value_hint, with_section_defaults

    data = stage.config
    if experiment is not None and "experiment" in config_class.model_fields:
        data = {**data, "experiment": experiment}
    try:
        config_class.model_validate(with_section_defaults(config_class, data))
    except ValidationError as err:
        for error in err.errors():
            value = _lookup(data, error["loc"])
            if references(value) or uses_seed(value):  # a reference, or a section holding one (train: {...})
                continue
            key = ".".join(str(p) for p in error["loc"]) or "config"
            if error["type"] == "extra_forbidden":
                hint = unknown_key_hint(config_class, error["loc"], f"interlingua run {stage.workflow} --list-keys")
                raise RecipeError(f"stage {name!r} ({stage.workflow}): unknown config key {key!r}{hint}") from None
            raise RecipeError(f"stage {name!r} ({stage.workflow}): {key}: {error['msg']}"
                              f"{value_hint(config_class, error)}") from None


def stage_hash(workflow: str, resolved_config: dict[str, Any], input_files: Sequence[str] = ()) -> str:
    """Identity of a stage run: its workflow and its config with every reference resolved (so a changed
    upstream output, e.g. a new model version, changes it), plus the content digest of every local model folder
    the config names, alone or as a part of ``concat(A|B)`` (:func:`~interlingua.models.identity.with_model_files`),
    so a model rewritten in place runs the stage again, plus the fingerprint of every file in ``input_files`` (what a corpus workflow's ``input_urls``
    names), so an input rewritten in place does too. A config that names no model folder and no input file hashes
    as it did before either counted. A workflow whose config names a model by an asset name (``bitext-corpus``'s
    ``subword_tokenizer: e5-small``) counts that folder's digest too (its module's ``asset_model_files``); one whose
    results from the same config changed (``combine``'s raw ``concat``/``sum``) adds its module's ``stage_marks``
    (what is hashed: :func:`stage_payload`)."""
    text = json.dumps(stage_payload(workflow, resolved_config, input_files), sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def stage_payload(workflow: str, resolved_config: dict[str, Any], input_files: Sequence[str] = ()) -> dict[str, Any]:
    """What :func:`stage_hash` hashes: ``{"workflow", "config"}``, plus ``model_files``, ``asset_files``, ``marks`` and
    ``input_files`` where there are any."""
    from interlingua.models.identity import with_model_files
    from interlingua.workflows.registry import WORKFLOWS, load_workflow

    payload = with_model_files({"workflow": workflow, "config": resolved_config})
    module = load_workflow(workflow) if workflow in WORKFLOWS else None
    counted = getattr(module, "asset_model_files", None)
    assets = counted(resolved_config) if counted is not None else {}
    if assets:
        payload["asset_files"] = assets
    marked = getattr(module, "stage_marks", None)  # what the workflow now computes otherwise from the same config
    marks = marked(resolved_config) if marked is not None else {}
    if marks:
        payload["marks"] = marks
    if input_files:
        payload["input_files"] = {url: _input_fingerprint(url) for url in input_files}
    return payload


def _input_fingerprint(url: str) -> Any:
    """An input file's fingerprint as its corpus version counts it (size and ETag or content SHA-256), or
    ``"unreadable"``: the stage then runs, and its workflow says what is wrong with the file."""
    from interlingua.operators.corpus.input_fingerprints import fingerprint

    try:
        return fingerprint(url, content=True).model_dump()
    except (UserError, OSError, ValueError):
        return "unreadable"


def stage_outputs(summary: dict[str, Any] | None) -> dict[str, Any]:
    """A workflow's summary as references see it: every key, plus ``corpus``/``version`` split from a
    ``name@version`` or ``name/version`` corpus, and ``model`` = the registered model's URI."""
    outputs = dict(summary or {})
    corpus = outputs.get("corpus")
    if isinstance(corpus, str):
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)[@/](v-[0-9a-f]+)", corpus)
        if match:
            outputs["corpus"], outputs["version"] = match.group(1), match.group(2)
    if "model" not in outputs and isinstance(outputs.get("model_uri"), str):
        outputs["model"] = outputs["model_uri"]
    return outputs
