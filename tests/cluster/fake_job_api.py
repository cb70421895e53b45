"""A stand-in for a Ray head's job API for the fast tests (not a test module): answers ``/api/version``
and ``/api/jobs/ID`` the way Ray's dashboard does, with token authentication (401 without a token, 403
with a wrong one) and 404 for unknown jobs. The real head is exercised by the slow tests."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = "0123456789abcdef0123456789abcdef"


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):  # noqa: N802
        auth = self.headers.get("Authorization", "")
        if not auth:
            return self._send(401, "Unauthorized: Missing authentication token")
        if auth != f"Bearer {TOKEN}":
            return self._send(403, "Forbidden: Invalid authentication token")
        if self.path == "/api/version":
            return self._send(200, json.dumps({"version": "4", "ray_version": "2.60.0", "ray_commit": "x"}))
        if self.path.startswith("/api/jobs/"):
            job = self.path.split("/")[3]
            return self._send(404, f"Job {job} does not exist")
        return self._send(404, "not found")

    def _send(self, status: int, body: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextlib.contextmanager
def fake_job_api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
