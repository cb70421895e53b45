"""Model folders only a cluster has, refused where a run on it hashes model folders on the driver.

A recipe stage's hash and a refresh's config hash count the model folders a config names as this machine (the
driver) has them. On a cluster the work reads the cluster's copies: a folder only the cluster has would be rewritten
there unseen (the stage skipped, the refresh "nothing new"). A workflow that names model folders says which of its
config's local paths this machine lacks (``models_missing_here``: a path, ``./x``, ``~/x``, ``/x``, ``file:///x``)
and which values have a hub id's shape but name nothing here (``hub_shaped_models``: ``org/name`` is a hub id unless
the cluster has a folder at that relative path). The first are refused offline; the second only once the cluster
was asked (it lists the model folders it finds, ``model_folders``, unhashed): a hub id is a folder on no machine.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any


def models_only_the_cluster_may_have(workflow: ModuleType, config: Any, address: str | None, *,
                                     ask_cluster: bool) -> list[str]:
    """The model paths of ``config`` a run at ``address`` reads on a cluster but this machine lacks (none for a local
    run, or a workflow naming no model folders). ``ask_cluster``: connect (``init_ray``) and ask the cluster which
    hub-shaped values are folders there; without it they pass (a check made before anything connects)."""
    from interlingua.core.where_it_runs import runs_on_cluster

    missing = getattr(workflow, "models_missing_here", None)
    if missing is None or not runs_on_cluster(address):
        return []
    lacking = missing(config)
    shaped = workflow.hub_shaped_models(config) if ask_cluster else []
    if shaped:
        lacking += [spec for spec in _cluster_model_folders(workflow, config, address) if spec in shaped]
    return lacking


def refuse_models_only_the_cluster_has(workflow: ModuleType, config: Any, address: str | None, workflow_name: str, *,
                                       stage: str | None = None, ask_cluster: bool = True) -> None:
    """The one line :func:`refusal` for the model paths of ``config`` only the cluster may have
    (:func:`models_only_the_cluster_may_have`), when there are any: a recipe's stage ``stage`` raises it as a
    :class:`~interlingua.workflows.recipe_spec.RecipeError`, a refresh spec (no stage) as a :class:`UserError`."""
    lacking = models_only_the_cluster_may_have(workflow, config, address, ask_cluster=ask_cluster)
    if not lacking:
        return
    if stage is None:
        from interlingua.core.errors import UserError

        raise UserError(refusal(lacking, workflow_name))
    from interlingua.workflows.recipe_spec import RecipeError

    raise RecipeError(refusal(lacking, workflow_name, stage))


def refusal(lacking: list[str], workflow: str, stage: str | None = None) -> str:
    """The one line refusing ``lacking``, model paths of workflow ``workflow``'s config: a recipe's stage ``stage``,
    or (None) a refresh spec, starts it and says what hashes the folders here and what to do instead."""
    if stage is None:
        where, hashed_by, alternative = (f"refresh spec ({workflow})", "a refresh",
                                         f"build it with interlingua run {workflow} --address ...")
    else:
        where, hashed_by, alternative = (f"stage {stage!r} ({workflow})", "a recipe",
                                         f"run the stage alone (interlingua run {workflow} --address ...)")
    return (f"{where}: model folder {', '.join(lacking)} is not on this machine: {hashed_by} hashes its model folders "
            f"here, so the cluster's copy could change unseen; put the same folder at that path here (a relative folder "
            f"written ./a/b, a hub id org/name), or {alternative}, whose version id counts the cluster's copy")


def _cluster_model_folders(workflow: ModuleType, config: Any, address: str | None) -> list[str]:
    """The model folders the cluster finds for ``config`` (its ``model_folders``: the specs ``model_folder_digests``
    would hash, listed without reading a file of them)."""
    from interlingua.core.runtime import init_ray
    from interlingua.core.where_it_runs import on_the_cluster

    init_ray(address)
    return sorted(on_the_cluster(workflow.model_folders, config))
