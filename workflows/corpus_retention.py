"""Retention of corpus versions: keep the last N, and never delete what something still refers to.

Protected whatever their age: the version ``latest`` names, pinned versions (``interlingua corpus
pin``), versions holding files a kept version reuses, and every version a registered model was
trained on — read from the MLflow model registry, tag ``interlingua.corpus_versions``
(``"name@version,..."``, written from ``ModelCard.tags()``) of every model version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from interlingua.core.paging import paged

if TYPE_CHECKING:
    from interlingua.operators.corpus.store import CorpusStore

CORPUS_VERSIONS_TAG = "interlingua.corpus_versions"


def registered_corpus_versions(name: str, client=None) -> dict[str, list[str]]:
    """Versions of corpus ``name`` that registered model versions record, each with the models
    (``model/version``) that refer to it. ``client``: an ``MlflowClient`` (default: the tracking store)."""
    if client is None:
        from mlflow.tracking import MlflowClient

        from interlingua.core.runtime import use_tracking_store

        use_tracking_store()
        client = MlflowClient()
    referenced: dict[str, list[str]] = {}
    for model_version in paged(client.search_model_versions):  # all of them: one left out is unprotected
        for item in (model_version.tags or {}).get(CORPUS_VERSIONS_TAG, "").split(","):
            corpus, _, version = item.strip().partition("@")
            if corpus == name and version:
                referenced.setdefault(version, []).append(f"{model_version.name}/{model_version.version}")
    return referenced


def apply_retention(store: CorpusStore, name: str, keep_last: int, *, dry_run: bool = False,
                    client=None) -> dict:
    """Apply retention to corpus ``name``; returns what it did: ``{"keep_last", "dry_run", "deleted": [versions],
    "kept": {version: reason}, "referenced_by": {version: [model/version, ...]}}``. The store's versions are read
    first: a corpus or version folder that is a symbolic link, or a damaged manifest, is refused before the model
    registry is asked."""
    store.versions(name)  # refuses what the docstring names
    referenced = registered_corpus_versions(name, client)
    result = store.prune(name, keep_last, protected=sorted(referenced), dry_run=dry_run)
    return {"keep_last": keep_last, "dry_run": dry_run, "deleted": result["deleted"], "kept": result["kept"],
            "referenced_by": {version: models for version, models in referenced.items() if version in result["kept"]}}


def retention_text(name: str, retention: dict) -> str:
    """The lines to print for :func:`apply_retention`'s result: what was deleted and why the rest is kept."""
    verb = "would delete" if retention["dry_run"] else "deleted"
    lines = [f"{name}: {verb} {len(retention['deleted'])} version(s): {', '.join(retention['deleted']) or '-'}"]
    for version, reason in retention["kept"].items():
        models = retention["referenced_by"].get(version)
        lines.append(f"  kept {version}: {reason}" + (f" ({', '.join(models)})" if models else ""))
    return "\n".join(lines)


def prune_corpus(store: CorpusStore, name: str, keep_last: int, *, dry_run: bool = False, client=None) -> str:
    """:func:`apply_retention`, as the lines to print (:func:`retention_text`)."""
    return retention_text(name, apply_retention(store, name, keep_last, dry_run=dry_run, client=client))
