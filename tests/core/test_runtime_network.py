"""The embedded local Ray runtime listens on the loopback interface only: every listening socket of the driver
and of every process it started (GCS, raylet, workers, dashboard and runtime-env agents) is on 127.0.0.1/::1."""

import json
import subprocess
import sys

LOOPBACK = {"127.0.0.1", "::1", "::ffff:127.0.0.1"}

SCRIPT = """
import json, os, time
import psutil
from interlingua.core.runtime import init_ray

ray = init_ray(num_cpus=1, object_store_memory=80 * 1024**2)

@ray.remote
def pid():
    return os.getpid()

ray.get([pid.remote() for _ in range(2)])  # start worker processes too

@ray.remote
def cluster_seen_by_worker():
    from ray._private.services import canonicalize_bootstrap_address_or_die
    return os.environ.get("RAY_ADDRESS"), canonicalize_bootstrap_address_or_die(None)

seen = ray.get(cluster_seen_by_worker.remote())
gcs = ray.get_runtime_context().gcs_address
time.sleep(1)
me = psutil.Process()
listening = []
for process in [me, *me.children(recursive=True)]:
    try:
        for conn in process.net_connections(kind="inet"):
            if conn.status == psutil.CONN_LISTEN:
                listening.append([process.name(), conn.laddr.ip, conn.laddr.port])
    except psutil.Error:
        pass
ray.shutdown()
print(json.dumps({"listening": listening, "seen": list(seen), "gcs": gcs}))
"""


def test_local_ray_binds_every_listening_socket_to_loopback(tmp_path):
    env = {"INTERLINGUA_HOME": str(tmp_path), "RAY_USAGE_STATS_ENABLED": "0", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    listening = result["listening"]
    # workers address this cluster, not whichever Ray instances run on the machine (Ray Train's state queries)
    assert result["seen"] == [result["gcs"], result["gcs"]] and result["gcs"].startswith("127.0.0.1:")
    names = {name for name, _, _ in listening}
    assert {"gcs_server", "raylet"} <= names, listening  # the daemons were seen, so the check is not vacuous
    exposed = [entry for entry in listening if entry[1] not in LOOPBACK]
    assert exposed == [], f"listening beyond loopback: {exposed}"


RESTART_SCRIPT = """
import json, os
from interlingua.core.runtime import init_ray

ray = init_ray(num_cpus=1, object_store_memory=80 * 1024**2)
first = ray.get_runtime_context().gcs_address
seen = os.environ.get("RAY_ADDRESS")
from ray.util.state import list_nodes
nodes = len(list_nodes())          # Ray's own state client finds this instance through RAY_ADDRESS
ray.shutdown()
ray = init_ray(num_cpus=1, object_store_memory=80 * 1024**2)   # a fresh local Ray, not the dead address
second = ray.get_runtime_context().gcs_address
ray.shutdown()
print(json.dumps({"first": first, "seen": seen, "nodes": nodes, "second": second}))
"""


def test_local_ray_address_is_exported_for_rays_own_clients_and_not_mistaken_for_a_cluster(tmp_path):
    env = {"INTERLINGUA_HOME": str(tmp_path), "RAY_USAGE_STATS_ENABLED": "0", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", RESTART_SCRIPT], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["seen"] == result["first"] and result["nodes"] == 1
    assert result["second"]  # started anew (connecting to the dead first address would have raised)
