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


def prune_corpus(store: CorpusStore, name: str, keep_last: int, *, dry_run: bool = False, client=None) -> str:
    """Apply retention to corpus ``name``; returns the lines to print (what was deleted and why the
    rest is kept). The store's versions are read first: a corpus or version folder that is a symbolic link, or a
    damaged manifest, is refused before the model registry is asked."""
    store.versions(name)  # refuses what the docstring names
    referenced = registered_corpus_versions(name, client)
    result = store.prune(name, keep_last, protected=sorted(referenced), dry_run=dry_run)
    verb = "would delete" if dry_run else "deleted"
    lines = [f"{name}: {verb} {len(result['deleted'])} version(s): {', '.join(result['deleted']) or '-'}"]
    for version, reason in result["kept"].items():
        models = f" ({', '.join(referenced[version])})" if version in referenced else ""
        lines.append(f"  kept {version}: {reason}{models}")
    return "\n".join(lines)
