"""Corpora a recipe's stages read by a literal name (``corpus: bible-en-es``, not ``${stages.bible.corpus}``).

Each must be one a stage before the reader publishes (its name fixed by that stage's config, e.g. ``name:``, or
the config's default), or be published in the reader's corpus store (``<state>/corpus``: a local folder, so listing
it is cheap). A corpus read at its latest version that only a later stage builds is refused even when the store holds
it: the reader would get the version before the recipe's, and a rerun the recipe's own (a pinned version is read as
given). :func:`check_stored_corpora` refuses any other in one line, with the closest name, before Ray or
MLflow start, not when the reading stage runs after the stages before it. A value holding a reference or
``${seed}`` is not checked; a corpus name built from one matches any name in its place.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from typing import Any

from interlingua.core.names import split_corpus_ref
from interlingua.workflows.recipe_spec import (REFERENCE, SEED, RecipeConfig, RecipeError, did_you_mean, key_stage,
                                               references, stage_state_dir, uses_seed)

#: workflow -> the config keys naming a corpus it reads from its state's store (``NAME``, ``NAME@VERSION`` or
#: ``NAME/VERSION``; ``*``: each item of a list), each with the key of its version where the workflow has one.
READS: dict[str, tuple[tuple[str, str | None], ...]] = {
    "train": (("corpus", "version"), ("entities", None)),
    "amr-retrofit": (("corpus", "version"),),
    "hard-negatives": (("corpus", None),),
    "corpus-mix": (("sources.*.corpus", None),),
    "meaning-head": (("bitext.corpus", None),),
    "absent": (("bitext.corpus", None),),
}
#: workflow -> the config keys naming a corpus it publishes (their default: the workflow config's), each with a
#: suffix and the output that names the corpus (ease-corpus publishes NAME, its ``corpus``, and NAME-entities).
BUILDS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "amr-corpus": (("corpus_name", "", "corpus"),),
    "bitext-corpus": (("corpus_name", "", "corpus"),),
    "ease-corpus": (("name", "", "corpus"), ("name", "-entities", "entities")),
    "bible-bitext": (("name", "", "corpus"),),
    "apertium-bitext": (("name", "", "corpus"),),
    "gettext-bitext": (("name", "", "corpus"),),
    "wiki-title-lead": (("name", "", "corpus"),),
    "corpus-mix": (("name", "", "corpus"),),
    "hard-negatives": (("name", "", "corpus"),),  # unset: <the corpus it reads>-hn
    "quickstart": (("corpus_name", "", "corpus"),),  # last: it trains too (corpus_workflow names a corpus build first)
}


def corpus_workflow(corpus: str) -> str | None:
    """The workflow that builds corpus ``corpus`` (:data:`BUILDS`): the one so named, else the one whose default
    corpus name it is, in the table's order (``bible-en-es``: bible-bitext, not quickstart); None when none is."""
    from interlingua.workflows.registry import load_workflow

    if corpus in BUILDS:
        return corpus
    for workflow, entries in BUILDS.items():
        fields = load_workflow(workflow).CONFIG.model_fields
        if any(isinstance(fields[key].default, str) and fields[key].default + suffix == corpus
               for key, suffix, _ in entries):
            return workflow
    return None


def check_stored_corpora(recipe: RecipeConfig, order: list[str], done: frozenset[str] = frozenset()) -> None:
    """Refuse a corpus read by literal name (and version) that no stage before its reader in ``order`` builds and
    the reader's store does not hold (see the module doc). Stages in ``done`` (finished in an earlier run of the
    recipe, see :func:`finished_stages`) are not checked: a rerun skips them, so a corpus they read and that was
    pruned since is not needed (a stage whose config changed runs again and its workflow reports it then)."""
    builders = [(pattern, at, f"${{stages.{name}.{output}}}") for at, name in enumerate(order)
                for pattern, output in built_corpora(recipe.stages[name])]
    for position, name in enumerate(order):
        if name in done:
            continue
        stage = recipe.stages[name]
        for key, corpus, version_key, version in literal_reads(stage.workflow, stage.config):
            matches = [(pattern, at, ref) for pattern, at, ref in builders if fnmatch.fnmatchcase(corpus, pattern)]
            root = _store_root(recipe, stage.config)
            if root is None or any(at < position for _, at, _ in matches):
                continue
            later = next((ref for pattern, at, ref in matches if at > position and pattern == corpus), None)
            _check_in_store(f"stage {name!r} ({stage.workflow})", key, corpus, version_key, version, root, later,
                            [pattern for pattern, _, _ in builders if "*" not in pattern])
            if later and version is LATEST_READ:
                pin = f"{key}: {corpus}@VERSION" if version_key == key else f"{version_key}: VERSION"
                raise RecipeError(
                    f"stage {name!r} ({stage.workflow}): {key}: corpus {corpus!r} is read at its latest version, which "
                    f"a later stage replaces: read it as {later}, so that stage runs first, or pin the version to "
                    f"read ({pin}; see: interlingua corpus list --name {corpus} --root {root})")


def finished_stages(state: dict[str, dict[str, Any]]) -> frozenset[str]:
    """Names of the stages a recipe's state records as done (``NAME`` or, per seed, ``NAME.seedN``: done for every
    seed recorded)."""
    status: dict[str, list[bool]] = {}
    for key, entry in state.items():
        status.setdefault(key_stage(key), []).append(isinstance(entry, dict) and entry.get("status") == "done")
    return frozenset(name for name, flags in status.items() if all(flags))


#: the version :func:`literal_reads` gives a corpus read at its latest version (its config names none)
LATEST_READ = None


def literal_reads(workflow: str, config: dict[str, Any]) -> Iterator[tuple[str, str, str, str | None]]:
    """(key, corpus name, key of its version, version) of each corpus ``config`` names literally; the version is
    :data:`LATEST_READ` (None) when the config names none, ``""`` when one it names is a reference or uses
    ``${seed}`` (not known before the run). The key of the version is the workflow's version key (``version``)
    where it has one and the version is not given in the name (``NAME@VERSION``), else the name's own key."""
    for path, version_key in READS.get(workflow, ()):
        for key, value in _values(config, path.split("."), []):
            if not isinstance(value, str) or references(value) or uses_seed(value):
                continue
            corpus, version = split_corpus_ref(value)
            given = config.get(version_key) if version_key and not version else None
            if version:
                yield key, corpus, key, version
            elif isinstance(given, str):
                yield key, corpus, version_key, given if not (references(given) or uses_seed(given)) else ""
            else:
                yield key, corpus, version_key or key, LATEST_READ


def built_corpora(stage) -> list[tuple[str, str]]:
    """(name, output naming it) of each corpus ``stage`` publishes; the name is a glob pattern: a reference or
    ``${seed}`` in it matches anything there."""
    from interlingua.workflows.registry import load_workflow

    entries = BUILDS.get(stage.workflow, ())
    fields = load_workflow(stage.workflow).CONFIG.model_fields if entries else {}
    patterns = []
    for key, suffix, output in entries:
        value = stage.config.get(key, fields[key].default)
        if value is None and stage.workflow == "hard-negatives":
            from interlingua.workflows.hard_negatives import default_name

            value = default_name(str(stage.config.get("corpus", "")))
        if isinstance(value, str):
            patterns.append((SEED.sub("*", REFERENCE.sub("*", value)) + suffix, output))
    return patterns


def _values(value: Any, path: list[str], seen: list[str]) -> Iterator[tuple[str, Any]]:
    """(dotted key, value) at ``path`` inside ``value`` (``*``: each item of a list, as ``key[i]``)."""
    if not path:
        yield ".".join(seen).replace(".[", "["), value
    elif path[0] == "*" and isinstance(value, list):
        for i, item in enumerate(value):
            yield from _values(item, path[1:], [*seen, f"[{i}]"])
    elif isinstance(value, dict) and path[0] in value:
        yield from _values(value[path[0]], path[1:], [*seen, path[0]])


def _store_root(recipe: RecipeConfig, config: dict[str, Any]) -> str | None:
    """The corpus store the stage reads (its ``state_dir``, else the recipe's, as the recipe hands it on); None when
    its state folder is a reference."""
    from interlingua.core.runtime import corpus_root, state_path

    state = stage_state_dir(recipe, config)
    if isinstance(state, str) and (references(state) or uses_seed(state)):
        return None
    return corpus_root(state_path(state))


def _check_in_store(label: str, key: str, corpus: str, version_key: str, version: str | None, root: str,
                    later: str | None, built: list[str]) -> None:
    from interlingua.operators.corpus.store import LATEST, CorpusLookupError, CorpusStore

    store = CorpusStore(root)
    try:
        store.manifest(corpus, version or LATEST)
        return
    except CorpusLookupError:
        pass
    except ValueError as err:  # not a corpus name at all
        raise RecipeError(f"{label}: {key}: {err}") from None
    published = store.corpus_names()
    if corpus in published:
        raise RecipeError(f"{label}: {version_key}: corpus {corpus!r} has no version {version!r} in the corpus store "
                          f"{root} (published: {', '.join(store.versions(corpus))}; see: interlingua corpus list "
                          f"--name {corpus} --root {root})")
    if later:
        hint = f"a later stage builds it: read it as {later}, so that stage runs first; "
    else:
        hint = did_you_mean(corpus, {*published, *built})
    raise RecipeError(f"{label}: {key}: no stage before it builds corpus {corpus!r} and the corpus store {root} does "
                      f"not hold it ({hint}see: interlingua corpus list --root {root})")
