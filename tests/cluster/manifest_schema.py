"""Offline schema checks for the manifests (not a test module).

- Core Kubernetes objects (and the pod templates inside KubeRay objects) against the ``kubernetes`` Python
  client's models (pydantic, ``extra="forbid"``, strict leaf types, required fields).
- KubeRay objects against the field names, required fields and enums of KubeRay's CRDs
  (``kuberay_crd_fields.json``, extracted from ray-project/kuberay's ``ray-operator/config/crd/bases``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CRD = json.loads((Path(__file__).parent / "kuberay_crd_fields.json").read_text())


def model_for(api_version: str, kind: str) -> str:
    group, _, version = api_version.rpartition("/")
    return f"{version.capitalize()}{kind}" if version else f"V1{kind}"


def check_k8s(data: Any, type_name: str, path: str) -> list[str]:
    """Errors of ``data`` against the kubernetes client model ``type_name`` (e.g. ``V1PodTemplateSpec``):
    the client's models are strict pydantic models (unknown keys forbidden, strict leaf types, required
    fields), validated here by their JSON (camelCase) names."""
    import kubernetes.client.models as models
    from pydantic import ValidationError

    cls = getattr(models, type_name)
    try:
        cls.model_validate(data)
    except ValidationError as err:
        return [f"{path}.{'.'.join(str(p) for p in e['loc'])}: {e['msg']} ({type_name})" for e in err.errors()]
    return []


def check_fields(data: Any, spec_name: str, path: str, section: dict) -> list[str]:
    if not isinstance(data, dict):
        return [f"{path}: expected a mapping for {spec_name}"]
    errors = [f"{path}.{k}: not a field of {spec_name} (KubeRay CRD)" for k in data if k not in section["fields"]]
    errors += [f"{path}: missing required field {k} of {spec_name}" for k in section["required"] if k not in data]
    return errors


def _string_map(data: Any, path: str) -> list[str]:
    if not isinstance(data, dict):
        return [f"{path}: expected a mapping of strings"]
    return [f"{path}.{k}: expected a string, got {type(v).__name__} {v!r}" for k, v in data.items() if not isinstance(v, str)]


def check_ray_cluster_spec(spec: dict, path: str) -> list[str]:
    rc = CRD["RayCluster"]
    errors = check_fields(spec, "RayCluster.spec", path, rc["spec"])
    head = spec.get("headGroupSpec", {})
    errors += check_fields(head, "headGroupSpec", f"{path}.headGroupSpec", rc["headGroupSpec"])
    errors += _string_map(head.get("rayStartParams", {}), f"{path}.headGroupSpec.rayStartParams")
    errors += check_k8s(head.get("template", {}), "V1PodTemplateSpec", f"{path}.headGroupSpec.template")
    for i, group in enumerate(spec.get("workerGroupSpecs", [])):
        where = f"{path}.workerGroupSpecs[{i}]"
        errors += check_fields(group, "workerGroupSpecs[]", where, rc["workerGroupSpecs[]"])
        errors += _string_map(group.get("rayStartParams", {}), f"{where}.rayStartParams")
        errors += check_k8s(group.get("template", {}), "V1PodTemplateSpec", f"{where}.template")
        if not group.get("minReplicas", 0) <= group.get("replicas", group.get("minReplicas", 0)) <= group.get("maxReplicas", 0):
            errors.append(f"{where}: replicas must lie between minReplicas and maxReplicas")
        errors += _idle_timeout_errors(group, spec, where)
    if "autoscalerOptions" in spec:
        auto = spec["autoscalerOptions"]
        errors += check_fields(auto, "autoscalerOptions", f"{path}.autoscalerOptions", rc["autoscalerOptions"])
        for key in ("upscalingMode", "version"):
            value = auto.get(key)
            if value is not None and value not in rc["enums"][f"autoscalerOptions.{key}"]:
                errors.append(f"{path}.autoscalerOptions.{key}: {value!r} not one of the CRD's values")
        if "resources" in auto:
            errors += check_k8s(auto["resources"], "V1ResourceRequirements", f"{path}.autoscalerOptions.resources")
    if "authOptions" in spec:
        auth = spec["authOptions"]
        errors += check_fields(auth, "authOptions", f"{path}.authOptions", rc["authOptions"])
        if auth.get("mode") not in rc["enums"]["authOptions.mode"]:
            errors.append(f"{path}.authOptions.mode: {auth.get('mode')!r} not one of the CRD's values")
    return errors


def _autoscaler_v2(spec: dict) -> bool:
    """KubeRay's test for autoscaler v2: ``autoscalerOptions.version: v2``, or (its switch before v1.4) the head
    container's ``RAY_ENABLE_AUTOSCALER_V2`` set to ``1`` or ``true``."""
    if (spec.get("autoscalerOptions") or {}).get("version") == "v2":
        return True
    head = (spec.get("headGroupSpec", {}).get("template", {}).get("spec", {}).get("containers") or [{}])[0]
    env = {e.get("name"): e.get("value") for e in head.get("env", [])}
    return env.get("RAY_ENABLE_AUTOSCALER_V2") in ("1", "true")


def _idle_timeout_errors(group: dict, spec: dict, where: str) -> list[str]:
    """KubeRay's ``validateWorkerGroupIdleTimeout`` (ray-operator/controllers/ray/utils/validation.go, v1.6 and
    v1.7): a worker group's own ``idleTimeoutSeconds`` must be non-negative and needs autoscaler v2; the operator
    rejects a RayCluster that breaks it, and no pod starts."""
    timeout = group.get("idleTimeoutSeconds")
    if timeout is None:
        return []
    if timeout < 0:
        return [f"{where}.idleTimeoutSeconds: must be non-negative, got {timeout}"]
    if _autoscaler_v2(spec):
        return []
    return [f"{where}.idleTimeoutSeconds is set, but autoscaler v2 is not enabled (KubeRay rejects the cluster); "
            "set autoscalerOptions.version: v2"]


def check_ray_job_spec(spec: dict, path: str) -> list[str]:
    rj = CRD["RayJob"]
    errors = check_fields(spec, "RayJob.spec", path, rj["spec"])
    if not isinstance(spec.get("entrypoint"), str):
        errors.append(f"{path}.entrypoint: expected a command line string")
    if "metadata" in spec:
        errors += _string_map(spec["metadata"], f"{path}.metadata")
    if "clusterSelector" in spec:
        errors += _string_map(spec["clusterSelector"], f"{path}.clusterSelector")
    if "rayClusterSpec" in spec:
        errors += check_ray_cluster_spec(spec["rayClusterSpec"], f"{path}.rayClusterSpec")
    if "submitterPodTemplate" in spec:
        errors += check_k8s(spec["submitterPodTemplate"], "V1PodTemplateSpec", f"{path}.submitterPodTemplate")
    if "submissionMode" in spec and spec["submissionMode"] not in rj["submissionMode_values"]:
        errors.append(f"{path}.submissionMode: {spec['submissionMode']!r} is not a KubeRay submission mode")
    if ("clusterSelector" in spec) == ("rayClusterSpec" in spec):
        errors.append(f"{path}: give exactly one of clusterSelector (existing cluster) and rayClusterSpec")
    return errors


def check_document(doc: dict, where: str) -> list[str]:
    """All schema errors of one manifest document."""
    kind, api = doc.get("kind"), doc.get("apiVersion", "")
    if api.startswith("ray.io/"):
        if api != CRD["apiVersion"]:
            return [f"{where}: apiVersion {api} (KubeRay serves {CRD['apiVersion']})"]
        errors = check_k8s(doc.get("metadata", {}), "V1ObjectMeta", f"{where}.metadata")
        extra = set(doc) - {"apiVersion", "kind", "metadata", "spec"}
        errors += [f"{where}.{k}: not a top-level field" for k in sorted(extra)]
        if kind == "RayCluster":
            return errors + check_ray_cluster_spec(doc.get("spec", {}), f"{where}.spec")
        if kind == "RayJob":
            return errors + check_ray_job_spec(doc.get("spec", {}), f"{where}.spec")
        return errors + [f"{where}: kind {kind} is not checked"]
    return check_k8s(doc, model_for(api, kind), where)
