"""The deployment manifests in cluster/ are valid and run real commands: Kubernetes objects against the
``kubernetes`` client's models, KubeRay objects against KubeRay's CRD fields, the launcher config against
Ray's own schema, and every ``interlingua ...`` entrypoint through the CLI's own validation (no Ray)."""

from __future__ import annotations

import copy
import os
import re
import tomllib
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from interlingua.cluster.manifests import MANIFEST_DIR, entrypoints, load_documents, manifest_files
from interlingua.workflows.cli import build_parser, main
from interlingua.workflows.commands import COMMANDS
from manifest_schema import check_document

REPO = MANIFEST_DIR.parent
MAIN_WORKFLOWS = {"quickstart", "bitext-corpus", "amr-corpus", "amr-retrofit", "ease-corpus"}
KUBE_FILES = manifest_files("kuberay")
ALL_ENTRYPOINTS = [e for f in manifest_files() for e in entrypoints(f)]


def _docs(name: str) -> list[dict]:
    return load_documents(MANIFEST_DIR / name)


def _by_kind(kind: str) -> list[dict]:
    return [d for f in KUBE_FILES for d in load_documents(f) if d.get("kind") == kind]


@pytest.mark.parametrize("path", KUBE_FILES, ids=lambda p: str(p.relative_to(MANIFEST_DIR)))
def test_every_kubernetes_document_matches_its_schema(path):
    docs = load_documents(path)
    assert docs
    for i, doc in enumerate(docs):
        assert check_document(doc, f"{path.name}[{i}] {doc.get('kind')}") == []


@pytest.mark.parametrize("mutate,expected", [
    (lambda d: d["spec"].update(headGroupSpecs=d["spec"].pop("headGroupSpec")), "not a field of RayCluster.spec"),
    (lambda d: d["spec"]["workerGroupSpecs"][0].pop("groupName"), "missing required field groupName"),
    (lambda d: d["spec"]["headGroupSpec"]["rayStartParams"].update({"num-cpus": 0}), "expected a string"),
    (lambda d: d["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0].update(imagePullPolicyy="Always"),
     "imagePullPolicyy: Extra inputs are not permitted"),
    (lambda d: d["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0].pop("name"), "name: Field required"),
    (lambda d: d["spec"]["workerGroupSpecs"][1]["template"]["spec"]["containers"][0]["resources"]["limits"].update(
        {"nvidia.com/gpu": 1}), "valid string"),
    (lambda d: d["spec"]["autoscalerOptions"].update(upscalingMode="Fast"), "not one of the CRD's values"),
    (lambda d: d["spec"]["workerGroupSpecs"][1].update(replicas=9), "between minReplicas and maxReplicas"),
    (lambda d: d["spec"]["autoscalerOptions"].update(version="V2"), "not one of the CRD's values"),
    # KubeRay (v1.6, v1.7) rejects a group's own idle timeout under autoscaler v1: the gpu group sets one
    (lambda d: d["spec"]["autoscalerOptions"].pop("version"), "idleTimeoutSeconds is set, but autoscaler v2 is not"),
    (lambda d: d["spec"]["autoscalerOptions"].update(version="v1"), "idleTimeoutSeconds is set, but autoscaler v2"),
    (lambda d: d["spec"]["workerGroupSpecs"][1].update(idleTimeoutSeconds=-1), "must be non-negative, got -1"),
])
def test_the_schema_check_catches_mistakes(mutate, expected):
    doc = copy.deepcopy(_docs("kuberay/raycluster.yaml")[0])
    mutate(doc)
    errors = check_document(doc, "RayCluster")
    assert any(expected in e for e in errors), errors


@pytest.mark.parametrize("head_env,accepted", [("true", True), ("1", True), ("false", False), (None, False)])
def test_a_groups_idle_timeout_also_passes_with_kuberays_older_autoscaler_v2_switch(head_env, accepted):
    """KubeRay's other way to autoscaler v2 (before v1.4): RAY_ENABLE_AUTOSCALER_V2 on the head container."""
    doc = copy.deepcopy(_docs("kuberay/raycluster.yaml")[0])
    assert doc["spec"]["workerGroupSpecs"][1]["idleTimeoutSeconds"] and doc["spec"]["autoscalerOptions"].pop("version")
    if head_env is not None:
        head = doc["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
        head["env"].append({"name": "RAY_ENABLE_AUTOSCALER_V2", "value": head_env})
    assert (check_document(doc, "RayCluster") == []) is accepted


def test_the_ray_cluster_has_a_cpu_group_and_an_autoscaling_gpu_group_with_token_auth():
    (cluster,) = _by_kind("RayCluster")
    spec = cluster["spec"]
    assert spec["enableInTreeAutoscaling"] is True and spec["rayVersion"] == _ray_pin()
    assert spec["authOptions"]["mode"] == "token" and spec["authOptions"]["secretName"]
    groups = {g["groupName"]: g for g in spec["workerGroupSpecs"]}
    gpu_pod = groups["gpu"]["template"]["spec"]
    gpu = gpu_pod["containers"][0]
    assert gpu["resources"]["limits"]["nvidia.com/gpu"] == "1" and gpu["image"].endswith("-gpu")
    assert groups["gpu"]["minReplicas"] == 0 < groups["gpu"]["maxReplicas"]
    assert gpu_pod["nodeSelector"] and any(t["key"] == "nvidia.com/gpu" for t in gpu_pod["tolerations"])
    cpu = groups["cpu"]["template"]["spec"]["containers"][0]
    assert "nvidia.com/gpu" not in cpu["resources"]["limits"] and cpu["image"].endswith("-cpu")
    for container in [spec["headGroupSpec"]["template"]["spec"]["containers"][0], cpu, gpu]:
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert env["INTERLINGUA_HOME"].startswith("/mnt/interlingua") and env["MLFLOW_TRACKING_URI"].startswith("http")


def test_there_is_a_ray_job_per_main_workflow_on_the_cluster():
    jobs = _by_kind("RayJob")
    workflows = {j["spec"]["metadata"]["interlingua.workflow"] for j in jobs}
    assert workflows == MAIN_WORKFLOWS
    (cluster,) = _by_kind("RayCluster")
    for job in jobs:
        assert job["spec"]["clusterSelector"] == {"ray.io/cluster": cluster["metadata"]["name"]}
        assert job["spec"]["entrypoint"].split()[:3] == ["interlingua", "run", job["spec"]["metadata"]["interlingua.workflow"]]


def test_images_are_the_projects_at_its_version_and_secrets_are_only_referenced():
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    text = "\n".join(p.read_text() for p in manifest_files())
    images = set(re.findall(r"image: (\S+)", text)) | set(re.findall(r"_image: (\S+)", text))
    assert images and all(re.fullmatch(rf".+/interlingua:{re.escape(version)}-(cpu|gpu)", i) for i in images), images
    for doc in (d for f in KUBE_FILES for d in load_documents(f)):
        for name, value in _literal_env(doc):
            assert not re.search(r"TOKEN|SECRET|PASSWORD|KEY", name), f"{name} has a literal value in a manifest"
    assert not re.search(r"auth_token\s*[:=]\s*['\"]?[0-9a-f]{16,}", text)


def test_the_launcher_config_is_valid_for_rays_cluster_launcher():
    import json

    import jsonschema
    import ray.autoscaler
    from ray.autoscaler._private.util import prepare_config, validate_config

    (config,) = _docs("launcher/aws-gpu.yaml")
    schema = json.loads((Path(ray.autoscaler.__file__).parent / "ray-schema.json").read_text())
    jsonschema.validate(config, schema)
    validate_config(prepare_config(copy.deepcopy(config)))
    assert config["docker"]["worker_image"].endswith("-gpu") and config["docker"]["head_image"].endswith("-cpu")
    gpu = config["available_node_types"]["gpu_worker"]
    assert gpu["max_workers"] > gpu["min_workers"] == 0 and gpu["node_config"]["InstanceType"].startswith(("g", "p"))
    starts = config["head_start_ray_commands"] + config["worker_start_ray_commands"]
    assert all("RAY_AUTH_MODE=token" in c for c in starts if "ray start" in c)  # token auth stays on
    assert "~/.ray/auth_token" in config["file_mounts"]


def test_every_launcher_node_fixes_the_ports_the_readme_says_to_open():
    """Ray picks the node manager, dashboard agent gRPC and runtime-env agent ports at random unless told, so a
    security group cannot name them. Before: only --object-manager-port was fixed while the README said the node
    manager's was too. Every node fixes the same ports, and the README's ports paragraph names exactly those."""
    (config,) = _docs("launcher/aws-gpu.yaml")
    starts = [c for c in config["head_start_ray_commands"] + config["worker_start_ray_commands"] if "ray start" in c]
    fixed = [_fixed_ports(c.replace("--port=6379", "")) for c in starts]  # the head's GCS port is listed apart
    assert len(starts) == 2 and fixed[0] == fixed[1], fixed
    assert {"--node-manager-port", "--object-manager-port", "--dashboard-agent-grpc-port",
            "--runtime-env-agent-port"} <= set(fixed[0])
    readme = (REPO / "README.md").read_text()
    paragraph = readme[readme.index("**Ports to open on a real cluster**"):].split("\n\n")[0]
    assert _fixed_ports(paragraph) == fixed[0]


def _fixed_ports(text: str) -> dict[str, int]:
    return {flag: int(port) for flag, port in re.findall(r"(--[a-z-]+-port)=(\d+)", text)}


@pytest.mark.parametrize("entry", [e for e in ALL_ENTRYPOINTS if e.argv[0] == "interlingua"],
                         ids=lambda e: f"{e.file}:{e.where}")
def test_every_interlingua_entrypoint_is_a_real_command_with_a_valid_config(entry, monkeypatch, capsys, tmp_path):
    """Files the container gets from a ConfigMap of its manifest (the CronJob's refresh spec) are written under
    tmp_path and their paths in the command line pointed there."""
    argv = list(entry.argv[1:])
    if argv[0] not in COMMANDS:
        pytest.fail(f"{entry.file} {entry.where}: `interlingua {argv[0]}` is not an interlingua command")
    for path, text in entry.files.items():
        local = tmp_path / path.lstrip("/")
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_text(text)
        argv = [str(local) if item == path else item for item in argv]
    for name in ("MLFLOW_TRACKING_URI", "RAY_ADDRESS", "RAY_API_SERVER_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in entry.env.items():
        monkeypatch.setenv(name, value)
    build_parser(load=argv[0]).parse_args(argv)  # argparse exits on an unknown option
    dry = {"run": ["--show-config"], "submit": ["--dry-run"]}.get(argv[0])
    if dry is None:
        return
    code = main([*argv, *dry])
    captured = capsys.readouterr()
    assert code == 0, f"{entry.file} {entry.where}: {captured.err}"


def test_the_entrypoint_check_rejects_a_bad_workflow_or_key(capsys):
    assert main(["run", "bitext-corpus", "--set", "worker=8", "--show-config"]) == 2
    assert "worker: unknown key" in capsys.readouterr().err
    assert main(["run", "bitext-corpuss", "--show-config"]) == 2


@pytest.mark.slow  # importing mlflow's server CLI takes ~10 s
def test_every_mlflow_server_command_parses_with_mlflows_cli():
    from mlflow.cli import server

    commands = [e for e in ALL_ENTRYPOINTS if e.argv[:2] == ("mlflow", "server")]
    assert commands
    for entry in commands:
        ctx = server.make_context("server", list(entry.argv[2:]))
        assert ctx.params["port"] == 5000 and ctx.params["host"] == "0.0.0.0"


def test_dockerfile_builds_on_rays_image_for_cpu_and_gpu_with_the_pinned_ray():
    text = (REPO / "Dockerfile").read_text()
    assert re.search(r"^ARG RAY_VERSION=(\S+)$", text, re.M).group(1) == _ray_pin()
    assert re.search(r"^FROM rayproject/ray:\$\{RAY_VERSION\}-py311-\$\{VARIANT\}$", text, re.M)
    assert re.search(r"^ARG VARIANT=cpu$", text, re.M)
    assert "download.pytorch.org/whl/cpu" in text  # the CPU variant takes the CPU torch wheel
    assert "uv export --locked" in text  # the locked dependency set, not fresh resolution
    ignored = (REPO / ".dockerignore").read_text().split()
    package_dirs = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"].values()
    assert not set(package_dirs) & set(ignored)  # every package folder reaches the image
    assert {".venv", ".interlingua", ".git"} <= set(ignored)


def _ray_pin() -> str:
    """Ray's version in uv.lock (the exact dependency set the image installs)."""
    lock = tomllib.loads((REPO / "uv.lock").read_text())
    return next(p["version"] for p in lock["package"] if p["name"] == "ray")


def _literal_env(node):
    if isinstance(node, dict):
        if "name" in node and "value" in node and len(node) == 2:
            yield node["name"], node["value"]
        for value in node.values():
            yield from _literal_env(value)
    elif isinstance(node, list):
        for item in node:
            yield from _literal_env(item)


def test_every_container_running_interlingua_has_a_writable_state_folder():
    """The image's INTERLINGUA_HOME is /mnt/interlingua/state; a container that mounts the shared volume read-only
    (the nightly CronJob's submitter) must point INTERLINGUA_HOME at a writable mount, or every run would fail to
    write its log (before: the CronJob failed each night)."""
    image_home = re.search(r"INTERLINGUA_HOME=(\S+)", (REPO / "Dockerfile").read_text())[1]
    checked = 0
    for doc in (d for f in KUBE_FILES for d in load_documents(f)):
        for container in _containers(doc):
            words = " ".join(map(str, container.get("command", []) + container.get("args", [])))
            if not re.search(r"(^|[\s;&|])interlingua\s", words):  # runs the interlingua command
                continue
            env = {e["name"]: e.get("value") for e in container.get("env", [])}
            home = env.get("INTERLINGUA_HOME") or image_home
            mounts = sorted(container.get("volumeMounts", []), key=lambda m: -len(m["mountPath"]))
            mount = next((m for m in mounts if home == m["mountPath"] or home.startswith(m["mountPath"].rstrip("/") + "/")),
                         None)
            assert mount is not None and not mount.get("readOnly"), (doc["metadata"]["name"], container["name"], home)
            checked += 1
    assert checked >= 1


def _mappings(node, matches):
    """Every mapping anywhere in a document for which ``matches`` is true."""
    if isinstance(node, dict):
        if matches(node):
            yield node
        for value in node.values():
            yield from _mappings(value, matches)
    elif isinstance(node, list):
        for item in node:
            yield from _mappings(item, matches)


def _containers(node):
    """Every container spec (a mapping with an image and a name) anywhere in a document."""
    return _mappings(node, lambda n: "image" in n and "name" in n)


def test_the_nightly_job_submits_a_refresh_of_its_spec_with_a_deadline(tmp_path):
    """It ran `submit bitext-corpus` (a full rebuild each night, versions piling up) while its comment and the
    README said it refreshed; and one hung `--wait` with concurrencyPolicy Forbid skipped every later night."""
    from interlingua.workflows.refresh import load_spec

    spec_map, cron = _docs("kuberay/corpus-refresh-cronjob.yaml")
    (entry,) = entrypoints(MANIFEST_DIR / "kuberay" / "corpus-refresh-cronjob.yaml")
    assert entry.argv[:5] == ("interlingua", "submit", "refresh", "-c", "/etc/interlingua/refresh.yaml")
    assert "--wait" in entry.argv and cron["spec"]["concurrencyPolicy"] == "Forbid"
    assert 0 < cron["spec"]["jobTemplate"]["spec"]["activeDeadlineSeconds"] <= 24 * 3600
    (tmp_path / "refresh.yaml").write_text(entry.files["/etc/interlingua/refresh.yaml"])
    spec = load_spec(str(tmp_path / "refresh.yaml"))
    assert spec.keep_versions and all(i.startswith("/mnt/interlingua/") for i in spec.inputs)
    assert spec_map["kind"] == "ConfigMap"


def _pod_specs(node):
    """Every pod spec (a mapping with ``containers``) anywhere in a document."""
    return _mappings(node, lambda n: isinstance(n.get("containers"), list))


def test_every_shipped_pod_runs_unprivileged():
    """No securityContext anywhere: root, privilege escalation and Linux capabilities were the runtime's defaults."""
    checked = 0
    for doc in (d for f in KUBE_FILES for d in load_documents(f)):
        for pod in _pod_specs(doc):
            where = doc["metadata"]["name"]
            security = pod.get("securityContext") or {}
            assert security.get("runAsNonRoot") is True and security.get("runAsUser", 0) > 0, where
            assert security.get("seccompProfile") == {"type": "RuntimeDefault"}, where
            for container in pod["containers"]:
                own = container.get("securityContext") or {}
                assert own.get("allowPrivilegeEscalation") is False, (where, container["name"])
                assert own.get("capabilities", {}).get("drop") == ["ALL"], (where, container["name"])
                if own.get("readOnlyRootFilesystem"):  # then /tmp is a volume of its own
                    tmp = next(m for m in container["volumeMounts"] if m["mountPath"] == "/tmp")
                    assert any(v["name"] == tmp["name"] and "emptyDir" in v for v in pod["volumes"]), where
            checked += 1
    assert checked >= 5  # Ray head, CPU and GPU workers, MLflow, the CronJob's submitter


def test_the_mlflow_server_is_replaced_not_rolled_and_reachable_from_its_namespace_only():
    pvc, deployment, service, policy = _docs("kuberay/mlflow.yaml")
    assert pvc["spec"]["accessModes"] == ["ReadWriteOnce"] and deployment["spec"]["strategy"] == {"type": "Recreate"}
    assert deployment["spec"]["template"]["spec"]["containers"][0]["securityContext"]["readOnlyRootFilesystem"]
    assert policy["kind"] == "NetworkPolicy" and policy["spec"]["podSelector"]["matchLabels"] == {"app": "mlflow"}
    (rule,) = policy["spec"]["ingress"]
    assert rule["from"] == [{"podSelector": {}}]  # this namespace's pods; no namespaceSelector, no ipBlock
    assert rule["ports"] == [{"protocol": "TCP", "port": service["spec"]["ports"][0]["targetPort"]}]


def test_the_mlflow_server_accepts_the_host_of_every_address_the_pods_and_the_readme_use():
    """MLflow refuses a request whose Host header its --allowed-hosts does not match (403 "Invalid Host header";
    mlflow's own matcher here). Before: the README's `MLFLOW_TRACKING_URI=http://127.0.0.1:5000` through
    `kubectl port-forward` sent Host 127.0.0.1:5000, which `localhost:*` did not allow."""
    from mlflow.server.security_utils import is_allowed_host_header

    _, deployment, service, _ = _docs("kuberay/mlflow.yaml")
    argv = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
    allowed = [h.strip() for h in argv[argv.index("--allowed-hosts") + 1].split(",")]
    readme = (REPO / "README.md").read_text()
    kubernetes_section = readme[readme.index("### From an empty Kubernetes cluster"):readme.index("\n## Layout")]
    port = service["spec"]["ports"][0]["port"]
    hosts = set(re.findall(rf"https?://([\w.-]+:{port})\b", kubernetes_section))
    hosts |= {urlsplit(value).netloc for doc in (d for f in KUBE_FILES for d in load_documents(f))
              for name, value in _literal_env(doc) if name == "MLFLOW_TRACKING_URI"}
    assert {"127.0.0.1:5000", "mlflow.interlingua.svc.cluster.local:5000"} <= hosts
    assert [h for h in sorted(hosts) if not is_allowed_host_header(allowed, h)] == []


def test_the_readme_pins_a_kuberay_operator_that_knows_the_clusters_fields():
    """An unpinned `helm install` took whatever chart was newest (or oldest in a mirror); authOptions.secretName,
    which raycluster.yaml uses, is in KubeRay's CRD and operator from v1.6.0 on (autoscalerOptions.version from
    v1.4.0)."""
    (cluster,) = _docs("kuberay/raycluster.yaml")
    assert cluster["spec"]["authOptions"]["secretName"]
    (line,) = [l for l in (REPO / "README.md").read_text().splitlines() if l.startswith("helm install kuberay-operator")]
    version = re.search(r"--version (\d+)\.(\d+)\.(\d+)\b", line)
    assert version and (int(version[1]), int(version[2])) >= (1, 6), line
