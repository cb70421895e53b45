"""The deployment manifests shipped in ``cluster/`` and the interlingua commands they run.

- ``kuberay/``: namespace + shared volume, the MLflow server, the ``RayCluster``, one ``RayJob`` per main
  workflow (``rayjobs/``) and the corpus-refresh ``CronJob``.
- ``launcher/``: a Ray cluster-launcher config (``ray up``).

:func:`entrypoints` finds every command line a manifest runs (RayJob ``spec.entrypoint``, container
``command`` + ``args``, launcher start commands) so tests can check each ``interlingua ...`` one
against the CLI.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MANIFEST_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Entrypoint:
    file: str  # relative to cluster/
    where: str  # e.g. "RayJob quickstart spec.entrypoint"
    argv: tuple[str, ...]
    env: dict[str, str]  # literal env values of the container (secret references left out)
    files: dict[str, str] = field(default_factory=dict)  # path -> text of the files ConfigMaps of the file mount


def manifest_files(kind: str | None = None) -> list[Path]:
    """Every YAML manifest (``kind`` = "kuberay" or "launcher" to pick one folder)."""
    folders = [MANIFEST_DIR / kind] if kind else [MANIFEST_DIR / "kuberay", MANIFEST_DIR / "launcher"]
    return sorted(p for folder in folders for p in folder.rglob("*.yaml"))


def load_documents(path: Path) -> list[dict[str, Any]]:
    import yaml

    with open(path, encoding="utf-8") as fh:
        return [doc for doc in yaml.safe_load_all(fh) if doc is not None]


def entrypoints(path: Path) -> list[Entrypoint]:
    rel = str(path.relative_to(MANIFEST_DIR))
    found = []
    documents = load_documents(path)
    config_maps = {d["metadata"]["name"]: d.get("data") or {} for d in documents if d.get("kind") == "ConfigMap"}
    for doc in documents:
        if "kind" not in doc:  # a cluster-launcher config
            for section in ("head_start_ray_commands", "worker_start_ray_commands", "setup_commands"):
                for line in doc.get(section) or []:
                    found.append(Entrypoint(rel, section, tuple(shlex.split(line)), {}))
            continue
        name = f"{doc['kind']} {doc.get('metadata', {}).get('name', '?')}"
        if doc["kind"] == "RayJob" and doc.get("spec", {}).get("entrypoint"):
            found.append(Entrypoint(rel, f"{name} spec.entrypoint", tuple(shlex.split(doc["spec"]["entrypoint"])), {}))
        for where, container in _containers(doc):
            argv = [*(container.get("command") or []), *(container.get("args") or [])]
            if argv:
                env = {e["name"]: e["value"] for e in container.get("env") or [] if "value" in e}
                found.append(Entrypoint(rel, f"{name} {where}", tuple(str(a) for a in argv), env,
                                        _mounted_files(doc, container, config_maps)))
    return found


def _mounted_files(doc: dict[str, Any], container: dict[str, Any], config_maps: dict[str, dict]) -> dict[str, str]:
    """The files the container sees from ConfigMaps defined in the same manifest file: mount path/key -> text."""
    volumes: dict[str, str] = {}

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            for volume in node.get("volumes") or []:
                if isinstance(volume, dict) and "configMap" in volume:
                    volumes[volume["name"]] = volume["configMap"]["name"]
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for item in node:
                collect(item)

    collect(doc)
    files = {}
    for mount in container.get("volumeMounts") or []:
        for key, text in config_maps.get(volumes.get(mount["name"], ""), {}).items():
            files[f"{mount['mountPath'].rstrip('/')}/{key}"] = text
    return files


def _containers(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("containers", "initContainers") and isinstance(value, list):
                for c in value:
                    yield f"{path}.{key}[{c.get('name', '?')}]".lstrip("."), c
            else:
                yield from _containers(value, f"{path}.{key}")
    elif isinstance(node, list):
        for item in node:
            yield from _containers(item, path)
