"""Every worker of the embedded local Ray prints whole lines: Ray's flush-after-each-write wrapper around a worker's
stdout/stderr let its log monitor forward a print's newline apart from its text, an empty line on the driver's
console (tests/core/test_console.py shows that mechanism with Ray's own LogMonitor)."""

import json
import subprocess
import sys

SCRIPT = """
import json, sys
from interlingua.core.runtime import init_ray

ray = init_ray(num_cpus=1, object_store_memory=80 * 1024**2)

def streams():
    return [[type(s).__module__ + "." + type(s).__name__, bool(getattr(s, "line_buffering", False))]
            for s in (sys.stdout, sys.stderr)]

@ray.remote
def task():
    return streams()

@ray.remote
class Actor:
    def streams(self):
        return streams()

actor = Actor.remote()
result = {"task": ray.get(task.remote()), "actor": ray.get(actor.streams.remote())}
ray.shutdown()
print(json.dumps(result))
"""


def test_a_local_rays_tasks_and_actors_write_line_buffered_streams(tmp_path):
    env = {"INTERLINGUA_HOME": str(tmp_path), "RAY_USAGE_STATS_ENABLED": "0", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    for where, streams in result.items():
        for kind, line_buffered in streams:
            assert not kind.endswith(".Unbuffered") and line_buffered, (where, streams)
