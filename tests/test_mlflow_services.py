"""The MLflow server the integration tests start holds its own port: a free port closed again can be taken by a
process beside the tests (a second suite's MLflow answers /health too) before the server binds it."""

from __future__ import annotations

import json
import urllib.request

import pytest

import mlflow_services
from mlflow_services import answering_server, mlflow_server


@pytest.mark.slow
def test_a_server_whose_port_was_taken_first_starts_on_another_port_not_the_takers(tmp_path, monkeypatch):
    """free_port() gives a port that a process answering every request took first: the server is started again on
    another port, and the URI yielded is the server's, not that process's."""
    free_port = mlflow_services.free_port
    with answering_server((200, "application/json", b"{}")) as (taker, _):
        taken = int(taker.rsplit(":", 1)[1])
        given = iter([taken])
        monkeypatch.setattr(mlflow_services, "free_port", lambda: next(given, None) or free_port())
        with mlflow_server(tmp_path / "server") as uri:
            assert uri != taker
            with urllib.request.urlopen(f"{uri}/api/2.0/mlflow/experiments/search?max_results=1", timeout=30) as got:
                assert [e["name"] for e in json.load(got)["experiments"]] == ["Default"]
