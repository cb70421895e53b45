"""The model a workflow starts from, resolved against the workflow's own MLflow store."""

from __future__ import annotations

from pathlib import Path


def resolve_in_state(uri: str, state: Path) -> str:
    """The local folder of ``uri`` (a folder, an fsspec URL, a hub id, ``models:/`` or ``runs:/``), with MLflow pointed
    at ``state``'s store first: a registry URI names a version there, not in ``./mlflow.db``. A URI that names nothing
    is a one-line :class:`~interlingua.core.errors.UserError`, raised before Ray or an MLflow run starts."""
    from interlingua.core.runtime import use_tracking_store
    from interlingua.models.load import resolve_model_folder

    use_tracking_store(state)
    return resolve_model_folder(uri)


def model_and_folder(model: str | None, state: Path) -> tuple[str, str]:
    """The URI a workflow starts from (``model``, or the state's e5-small asset folder, built when missing) and the
    local folder it names now (:func:`resolve_in_state`). A resume key holds the folder: a ``models:/name@alias``
    that moves resolves to another one."""
    if not model:
        from interlingua.core.runtime import assets_dir
        from interlingua.workflows.assets.build import e5_asset_uri

        folder = e5_asset_uri(assets_dir(state))
        return folder, folder
    return model, resolve_in_state(model, state)
