"""Recipe mistakes refused at load, before any stage runs: a reference to an output its stage's workflow never gives,
and a corpus read by a literal name that no earlier stage builds and the store does not hold. And the table of
outputs (``registry.OUTPUTS``) kept equal to what each workflow's ``run`` returns."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interlingua.operators.corpus.store import CorpusStore
from interlingua.workflows.recipe_corpora import check_stored_corpora
from interlingua.workflows.recipe_outputs import checked_entry
from interlingua.workflows.recipe_spec import RecipeConfig, RecipeError, stage_outputs, validate_recipe
from interlingua.workflows.registry import OUTPUTS, WORKFLOWS


def recipe(stages: dict, **extra) -> RecipeConfig:
    return RecipeConfig.model_validate({"name": "t", "stages": stages, **extra})


def load(stages: dict, **extra) -> list[str]:
    """What ``recipe.run`` checks before MLflow starts."""
    r = recipe(stages, **extra)
    order = validate_recipe(r)
    check_stored_corpora(r, order)
    return order


BIBLE = {"workflow": "bible-bitext"}
TRAIN = {"train": {"max_steps": 3}}


# ------------------------------------------------------------------------------------------- outputs


def test_a_misspelled_output_is_refused_with_the_closest_and_the_outputs():
    stages = {"bible": BIBLE, "tr": {"workflow": "train", "config": {"corpus": "${stages.bible.corpos}", **TRAIN}}}
    with pytest.raises(RecipeError) as err:
        validate_recipe(recipe(stages))
    message = str(err.value)
    assert message == ("stage 'tr': ${stages.bible.corpos}: stage 'bible' (bible-bitext) has no output 'corpos' (did "
                       "you mean 'corpus'? its outputs: corpus, heldout, languages, rejects, rows, version)")


def test_an_output_the_workflow_never_gives_is_refused_inside_a_longer_string_too():
    """combine registers nothing, so it has no model_uri; an interpolated reference is checked like a whole one."""
    stages = {"bible": BIBLE,
              "tr": {"workflow": "train", "config": {"corpus": "${stages.bible.corpus}", **TRAIN}},
              "both": {"workflow": "combine", "config": {"first": "${stages.tr.model}", "second": "x"}},
              "wise": {"workflow": "interpolate", "config": {"second": "${stages.both.model_uri}"}}}
    with pytest.raises(RecipeError, match=r"^stage 'wise': \$\{stages\.both\.model_uri\}: stage 'both' \(combine\) "
                                          r"has no output 'model_uri' \(did you mean 'model'\? its outputs: "):
        validate_recipe(recipe(stages))
    stages["wise"]["config"]["second"] = "${stages.both.model}"
    stages["tr"]["config"]["registered_model"] = "m-${stages.bible.verison}"
    with pytest.raises(RecipeError, match=r"^stage 'tr': \$\{stages\.bible\.verison\}: .*did you mean 'version'"):
        validate_recipe(recipe(stages))


def _summary_keys(module, function: str = "run", seen: frozenset = frozenset()) -> tuple[set[str], bool]:
    """The keys of the dict ``function`` of ``module`` returns, read from its source: returned dict literals, the
    literal, ``[key] =`` and ``.update({...})`` assignments of a returned name, and the dict a returned call of
    another function (this module's or an imported one) builds, with the call's keywords that land in its
    ``**extra``. Returns (keys, whether the dict takes the caller's extra keywords). Anything else fails the test."""
    tree = ast.parse(inspect.getsource(module))
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    node = functions[function]
    imported = {alias.asname or alias.name: n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                for alias in n.names}
    kwargs = node.args.kwarg.arg if node.args.kwarg else None

    def own(n):  # the nodes of this function, not of functions or lambdas defined inside it
        for child in ast.iter_child_nodes(n):
            if not isinstance(child, (ast.FunctionDef, ast.Lambda)):
                yield child
                yield from own(child)

    keys: set[str] = set()
    extra = False

    def dict_keys(d: ast.Dict) -> None:
        nonlocal extra
        for k, v in zip(d.keys, d.values):
            if k is None:
                assert isinstance(v, ast.Name) and v.id == kwargs, f"{module.__name__}.{function}: ** of {ast.dump(v)}"
                extra = True
            else:
                keys.add(k.value)

    def value_keys(value: ast.AST) -> None:
        if isinstance(value, ast.Dict):
            dict_keys(value)
        elif isinstance(value, ast.Name):
            found = False
            for n in own(node):
                target = n.targets[0] if isinstance(n, ast.Assign) else getattr(n, "target", None)
                if isinstance(target, ast.Name) and target.id == value.id and isinstance(n.value, ast.Dict):
                    dict_keys(n.value)
                    found = True
                elif (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
                      and target.value.id == value.id):
                    keys.add(target.slice.value)
                elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "update"
                      and isinstance(n.func.value, ast.Name) and n.func.value.id == value.id):
                    dict_keys(n.args[0])
            assert found, f"{module.__name__}.{function} returns {value.id}, which is never a dict literal"
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            name = value.func.id
            target = module if name in functions else importlib.import_module(imported[name])
            assert (target.__name__, name) not in seen, f"{name} calls itself"
            inner, takes_extra = _summary_keys(target, name, seen | {(target.__name__, name)})
            keys.update(inner)
            if takes_extra:
                callee = ast.parse(inspect.getsource(getattr(target, name))).body[0].args
                named = {a.arg for a in [*callee.posonlyargs, *callee.args, *callee.kwonlyargs]}
                keys.update(k.arg for k in value.keywords if k.arg not in named)
        else:
            raise AssertionError(f"{module.__name__}.{function} returns {ast.dump(value)[:80]}: cannot read its keys")

    returns = [n for n in own(node) if isinstance(n, ast.Return) and n.value is not None]
    assert returns, f"{module.__name__}.{function} returns nothing"
    for r in returns:
        value_keys(r.value)
    return keys, extra


@pytest.mark.parametrize("workflow", sorted(set(WORKFLOWS) - {"recipe"}))
def test_declared_outputs_are_what_run_returns(workflow):
    """Read from the source of each workflow's ``run``, as ``stage_outputs`` turns them into outputs (a corpus
    ``NAME@VERSION`` gives ``version``, ``model_uri`` gives ``model``): a key added to or dropped from a summary
    without the table fails here."""
    keys, _ = _summary_keys(importlib.import_module(WORKFLOWS[workflow]))
    placeholder = {k: "c@v-0123456789ab" if k == "corpus" else "models:/m/1" for k in keys}
    assert OUTPUTS[workflow] == set(stage_outputs(placeholder))


def test_the_table_names_every_workflow_a_stage_may_run():
    assert set(OUTPUTS) == set(WORKFLOWS) - {"recipe"}


def test_declared_outputs_of_two_corpus_builds_match_their_real_summaries(tmp_path):
    """The reading of the source above, checked against real runs (both are quick: no Ray, no model)."""
    from interlingua.workflows import bible_bitext, corpus_mix

    bible = tmp_path / "bible.parquet"
    n = 60
    pq.write_table(pa.table({"id": [f"GEN.1.{i}" for i in range(n)],
                             "en": [f"In the beginning {i} words" for i in range(n)],
                             "es": [f"En el principio {i} palabras" for i in range(n)]}), bible)
    built = bible_bitext.run(bible_bitext.BibleBitextConfig(bitext=str(bible), state_dir=str(tmp_path)))
    assert set(stage_outputs(built)) == OUTPUTS["bible-bitext"]
    mixed = corpus_mix.run(corpus_mix.CorpusMixConfig(sources=[{"corpus": built["corpus"], "rows": 5}],
                                                      state_dir=str(tmp_path)))
    assert set(stage_outputs(mixed)) == OUTPUTS["corpus-mix"]
    for workflow, summary in (("bible-bitext", built), ("corpus-mix", mixed)):  # as a rerun reads them back
        recorded = json.loads(json.dumps({"run_id": "0" * 32, "outputs": stage_outputs(summary)}, default=str))
        checked_entry(recorded, workflow=workflow, key="s", state_file=tmp_path / "state.json", config={}, done=True)


# ------------------------------------------------------------------------------------------- corpora by name


@pytest.fixture()
def store(tmp_path, monkeypatch):
    """An empty state folder (``$INTERLINGUA_HOME``) whose store holds ``bible-en-es`` only."""
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    store = CorpusStore(str(tmp_path / "state" / "corpus"))
    writer = store.open_version("bible-en-es", {"n": 1}, ["test"])
    writer.write_shard("s0", pa.table({"id": ["1"], "src": ["a"], "tgt": ["b"]}))
    writer.publish(expected_shards=["s0"])
    return store


def test_a_literal_corpus_nothing_builds_or_holds_is_refused_with_the_closest_name(store):
    stages = {"tr": {"workflow": "train", "config": {"corpus": "bibel-en-es", **TRAIN}}}
    with pytest.raises(RecipeError) as err:
        load(stages)
    assert str(err.value) == (f"stage 'tr' (train): corpus: no stage before it builds corpus 'bibel-en-es' and the "
                              f"corpus store {store.root} does not hold it (did you mean 'bible-en-es'? see: "
                              f"interlingua corpus list --root {store.root})")
    stages["tr"]["config"]["corpus"] = "bible-en-es"  # held by the store
    assert load(stages) == ["tr"]


def test_a_literal_version_the_store_lacks_is_refused(store):
    held = store.versions("bible-en-es")[0]
    stages = {"tr": {"workflow": "train", "config": {"corpus": "bible-en-es", "version": "v-000000000000", **TRAIN}}}
    with pytest.raises(RecipeError, match=rf"^stage 'tr' \(train\): version: corpus 'bible-en-es' has no version "
                                          rf"'v-000000000000' in the corpus store .* \(published: {held}; see: "
                                          rf"interlingua corpus list --name bible-en-es"):
        load(stages)
    stages["tr"]["config"]["version"] = held
    assert load(stages) == ["tr"]
    mix = {"mix": {"workflow": "corpus-mix", "config": {"sources": [{"corpus": f"bible-en-es@{held}"},
                                                                    {"corpus": "bible-en-es/v-000000000000"}]}}}
    with pytest.raises(RecipeError, match=r"^stage 'mix' \(corpus-mix\): sources\[1\]\.corpus: .*no version"):
        load(mix)


def test_a_corpus_an_earlier_stage_builds_by_its_fixed_name_is_accepted(store):
    """Built by name (``name:``, ``corpus_name:``, or the config's default), read by that literal name later: the
    store need not hold it yet. A stage reading it before its builder runs is told to reference it."""
    stages = {"wiki": {"workflow": "ease-corpus", "config": {"name": "my-ease"}},
              "bitext": {"workflow": "bitext-corpus", "config": {"corpus_name": "aligned"}},
              "apertium": {"workflow": "apertium-bitext"},
              "ease": {"workflow": "train", "config": {"corpus": "my-ease", "entities": "my-ease-entities",
                                                       "train": {"objective": "ease"}}},
              "tr": {"workflow": "train", "config": {"corpus": "aligned", **TRAIN}},
              "tr2": {"workflow": "train", "config": {"corpus": "apertium-bitext", **TRAIN}},
              "head": {"workflow": "meaning-head", "config": {"bitext": {"corpus": "aligned"}}}}
    assert load(stages) == list(stages)
    early = {"tr": {"workflow": "train", "config": {"corpus": "my-ease", "entities": "my-ease-entities", **TRAIN}},
             "wiki": {"workflow": "ease-corpus", "config": {"name": "my-ease"}}}
    with pytest.raises(RecipeError, match=r"^stage 'tr' \(train\): corpus: no stage before it builds corpus 'my-ease'"
                                          r" .*\(a later stage builds it: read it as \$\{stages\.wiki\.corpus\}, so "
                                          r"that stage runs first; see: interlingua corpus list"):
        load(early)
    early["tr"]["config"]["corpus"] = "bible-en-es"
    with pytest.raises(RecipeError, match=r"^stage 'tr' \(train\): entities: .*as \$\{stages\.wiki\.entities\}"):
        load(early)


def test_a_held_corpus_a_later_stage_rebuilds_is_read_by_reference_or_pinned_version(store):
    """The store holds bible-en-es, but a later stage publishes a new version of it: reading "latest" would give the
    old version on the first run and the recipe's own on a rerun."""
    held = store.versions("bible-en-es")[0]
    stages = {"tr": {"workflow": "train", "config": {"corpus": "bible-en-es", **TRAIN}},
              "bible": {"workflow": "bible-bitext", "config": {"name": "bible-en-es"}}}
    with pytest.raises(RecipeError) as err:
        load(stages)
    assert str(err.value) == (
        "stage 'tr' (train): corpus: corpus 'bible-en-es' is read at its latest version, which a later stage "
        "replaces: read it as ${stages.bible.corpus}, so that stage runs first, or pin the version to read "
        f"(version: VERSION; see: interlingua corpus list --name bible-en-es --root {store.root})")
    stages["tr"]["config"]["version"] = held  # pinned: read as given
    assert load(stages) == ["tr", "bible"]
    mix = {"mix": {"workflow": "corpus-mix", "config": {"sources": [{"corpus": "bible-en-es"}]}},
           "bible": {"workflow": "bible-bitext", "config": {"name": "bible-en-es"}}}
    with pytest.raises(RecipeError, match=r"sources\[0\]\.corpus: .*pin the version to read \(sources\[0\]\.corpus: "
                                          r"bible-en-es@VERSION; see"):
        load(mix)
    mix["mix"]["config"]["sources"][0]["corpus"] = f"bible-en-es@{held}"
    assert load(mix) == ["mix", "bible"]
    mix["mix"]["config"]["sources"][0]["corpus"] = "${stages.bible.corpus}"  # by reference: the builder runs first
    assert load(mix) == ["bible", "mix"]


def test_a_name_built_from_a_reference_matches_anything_in_its_place(store):
    """hard-negatives names its corpus <what it reads>-hn: read from a reference, only the suffix is known."""
    stages = {"mix": {"workflow": "corpus-mix", "config": {"sources": [{"corpus": "bible-en-es"}], "name": "mixed"}},
              "hn": {"workflow": "hard-negatives", "config": {"corpus": "${stages.mix.corpus}@${stages.mix.version}"}},
              "tr": {"workflow": "train", "config": {"corpus": "mixed-hn", **TRAIN}}}
    assert load(stages) == ["mix", "hn", "tr"]
    stages["tr"]["config"]["corpus"] = "mixed-hm"
    with pytest.raises(RecipeError, match="builds corpus 'mixed-hm'.*did you mean 'mixed'"):
        load(stages)


def test_the_store_checked_is_the_stage_s_state(store, tmp_path):
    """A stage's own state_dir, else the recipe's (as the recipe hands it on), else $INTERLINGUA_HOME."""
    stages = {"tr": {"workflow": "train", "config": {"corpus": "bible-en-es", **TRAIN}}}
    with pytest.raises(RecipeError, match=f"corpus store {tmp_path / 'other' / 'corpus'} does not hold it"):
        load(stages, state_dir=str(tmp_path / "other"))
    stages["tr"]["config"]["state_dir"] = str(tmp_path / "state")
    assert load(stages, state_dir=str(tmp_path / "other")) == ["tr"]
    assert not (tmp_path / "other").exists()  # checking creates no state folder


def test_cli_refuses_a_missing_corpus_in_one_line_before_mlflow(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nstages:\n  tr: {workflow: train, config: {corpus: bible-en-es}}\n")
    state = tmp_path / "s"
    proc = subprocess.run([sys.executable, "-m", "interlingua.workflows.cli", "run", "recipe", "-c", str(bad)],
                          capture_output=True, text=True, timeout=120, env={"INTERLINGUA_HOME": str(state),
                                                                             "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"interlingua run: error: stage 'tr' (train): corpus: no stage before it builds corpus 'bible-en-es' and the "
        f"corpus store {state / 'corpus'} does not hold it (see: interlingua corpus list --root {state / 'corpus'})"]
    assert not (state / "mlflow.db").exists()


def test_a_stage_a_rerun_skips_is_not_checked(store):
    """A finished stage is skipped by a rerun, so a corpus it read and that was pruned since does not block the rest
    of the recipe; a stage not finished for every seed is still checked."""
    from interlingua.workflows.recipe_corpora import finished_stages

    stages = {"tr": {"workflow": "train", "config": {"corpus": "pruned-since", **TRAIN}}}
    r = recipe(stages)
    order = validate_recipe(r)
    with pytest.raises(RecipeError, match="builds corpus 'pruned-since'"):
        check_stored_corpora(r, order, finished_stages({}))
    check_stored_corpora(r, order, finished_stages({"tr": {"status": "done", "hash": "h"}}))
    assert finished_stages({"tr.seed1": {"status": "done"}, "tr.seed2": {"status": "done"}}) == {"tr"}
    partly = {"tr.seed1": {"status": "done"}, "tr.seed2": {"status": "running", "run_id": "r"}}
    with pytest.raises(RecipeError, match="builds corpus 'pruned-since'"):
        check_stored_corpora(r, order, finished_stages(partly))
