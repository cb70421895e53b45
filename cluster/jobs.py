"""Ray jobs through Ray's job submission API (``ray.job_submission.JobSubmissionClient``): submit, list,
status, logs (whole or followed), stop, and the outcome of a finished job as one line.

Every failure of the API is turned into a :class:`UserError` that names what is wrong and what to do
(missing or wrong token, unknown job id; an unreachable head is a :class:`ServiceUnavailable`); Ray's own logging
stays quiet.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from interlingua.cluster.connection import (ClusterAddress, enable_token_auth, probe, resolve_address,
                                            sdk_address, without_address_env)
from interlingua.core.errors import ServiceUnavailable, UserError

TERMINAL = ("SUCCEEDED", "FAILED", "STOPPED")
#: Exit code of ``submit --wait`` / ``jobs logs --follow`` per final status.
EXIT_CODES = {"SUCCEEDED": 0, "FAILED": 1, "STOPPED": 3}
_ERROR_LINE = re.compile(r"^(interlingua \S+: error: .*|(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Interrupt)(?::.*)?)$")


@dataclass(frozen=True)
class JobState:
    """What ``jobs status`` shows; plain data."""

    job_id: str
    status: str
    entrypoint: str
    message: str = ""
    error_type: str | None = None
    start_time: float | None = None  # seconds since the epoch
    end_time: float | None = None
    driver_exit_code: int | None = None
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL

    @property
    def seconds(self) -> float | None:
        if self.start_time is None:
            return None
        return (self.end_time or time.time()) - self.start_time


class JobsClient:
    """A connection to one cluster's job API. Construct with :meth:`connect`."""

    def __init__(self, client: Any, address: ClusterAddress, token: str | None):
        self._client = client
        self.address = address
        self.token_source = token

    @classmethod
    def connect(cls, address: str | None = None) -> JobsClient:
        target = resolve_address(address)
        probe(target)
        token = enable_token_auth()
        from ray.job_submission import JobSubmissionClient

        _quiet_ray_logging()
        client = None
        with without_address_env():
            with _api_errors(target, token):
                client = JobSubmissionClient(sdk_address(target))
        return cls(client, target, token)

    # -- calls ------------------------------------------------------------------------------------

    def submit(self, *, entrypoint: str, runtime_env: dict[str, Any], metadata: dict[str, str],
               submission_id: str | None = None, entrypoint_num_cpus: float | None = None,
               entrypoint_num_gpus: float | None = None) -> str:
        with self._errors():
            return self._client.submit_job(entrypoint=entrypoint, runtime_env=runtime_env, metadata=metadata,
                                           submission_id=submission_id, entrypoint_num_cpus=entrypoint_num_cpus,
                                           entrypoint_num_gpus=entrypoint_num_gpus)

    def list(self) -> list[JobState]:
        with self._errors():
            jobs = self._client.list_jobs()
        states = [_state(getattr(j, "submission_id", None) or j.job_id, j) for j in jobs]
        return sorted(states, key=lambda s: s.start_time or 0)

    def state(self, job_id: str) -> JobState:
        with self._errors(job_id):
            return _state(job_id, self._client.get_job_info(job_id))

    def logs(self, job_id: str) -> str:
        with self._errors(job_id):
            return self._client.get_job_logs(job_id)

    def follow(self, job_id: str, write: Callable[[str], None]) -> JobState:
        """Stream the job's log to ``write`` (chunks of whole lines) until it finishes; its final state."""
        self.state(job_id)  # unknown id -> UserError before the websocket

        async def tail() -> None:
            async for chunk in self._client.tail_job_logs(job_id):
                write(chunk)

        with self._errors(job_id):
            try:
                asyncio.run(tail())
            except (RuntimeError, OSError) as err:
                if "does not exist" in str(err):
                    raise
                raise UserError(f"lost the log stream of job {job_id} from {self.address.shown} ({err}); the job may "
                                f"still be running: `interlingua jobs status {job_id}`") from None
        return self.wait(job_id, poll_s=0.2, timeout_s=30)

    def wait(self, job_id: str, poll_s: float = 1.0, timeout_s: float | None = None) -> JobState:
        start = time.monotonic()
        while True:
            state = self.state(job_id)
            if state.finished or (timeout_s is not None and time.monotonic() - start > timeout_s):
                return state
            time.sleep(poll_s)

    def stop(self, job_id: str) -> bool:
        """Ask the job to stop; False when it had already finished."""
        self.state(job_id)
        with self._errors(job_id):
            return bool(self._client.stop_job(job_id))

    @contextmanager
    def _errors(self, job_id: str | None = None):
        with _api_errors(self.address, self.token_source, job_id):
            yield


# -- outcome ----------------------------------------------------------------------------------------


def failure_reason(state: JobState, logs: str = "") -> str:
    """One line saying why a job did not succeed, from its state and (when given) its log."""
    if state.status == "STOPPED":
        return "it was stopped (interlingua jobs stop, or the cluster stopped it)"
    kind = (state.error_type or "").upper()
    code = state.driver_exit_code
    if kind == "RUNTIME_ENV_SETUP_FAILURE":
        return f"its runtime environment could not be set up: {_first_line(state.message)}"
    if kind.startswith("JOB_SUPERVISOR_ACTOR"):
        return (f"the job's supervisor on the cluster died or could not start ({kind.lower()}): a node was lost "
                "or ran out of memory; resubmit, and check the head node's memory")
    if code is not None and (code < 0 or code > 128):
        signal = -code if code < 0 else code - 128
        return (f"its driver process was killed (signal {signal}: out of memory, or killed on the node); "
                "give the head node more memory or resubmit")
    if code == 127:
        return ("its entrypoint was not found on the cluster (exit code 127): install interlingua in the cluster's "
                "image (see the Dockerfile), or submit with --ship-code")
    line = last_error_line(logs) or last_error_line(state.message or "")
    if line:
        return line
    return _first_line(state.message) or f"status {state.status}"


def last_error_line(text: str) -> str | None:
    """The last line of ``text`` that reads as an error (``interlingua X: error: ...`` or ``SomeError: ...``),
    else the last line that mentions an error at all (``... FATAL ERROR: ...``)."""
    lines = [line.strip() for line in reversed(text.splitlines())]
    return (next((line for line in lines if _ERROR_LINE.match(line)), None)
            or next((line for line in lines if "error" in line.lower() and " INFO " not in line), None))


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


# -- helpers ----------------------------------------------------------------------------------------


def _state(job_id: str, info: Any) -> JobState:
    status = getattr(info.status, "value", str(info.status))
    error_type = getattr(info, "error_type", None)
    return JobState(
        job_id=job_id, status=str(status), entrypoint=info.entrypoint or "", message=info.message or "",
        error_type=getattr(error_type, "value", error_type),
        start_time=info.start_time / 1000 if info.start_time else None,
        end_time=info.end_time / 1000 if info.end_time else None,
        driver_exit_code=getattr(info, "driver_exit_code", None),
        metadata=dict(info.metadata or {}))


@contextmanager
def _api_errors(address: ClusterAddress, token: str | None, job_id: str | None = None):
    from ray.exceptions import AuthenticationError

    try:
        yield
    except UserError:
        raise
    except AuthenticationError as err:
        text = str(err)
        if "Authentication failed" in text or "403" in text:
            # no "NAME: text" here: the console's masking reads "$RAY_AUTH_TOKEN: use" as a secret pair
            raise UserError(f"the Ray cluster at {address.shown} rejected the token from {token or 'nowhere'} "
                            "(hint - give this machine the cluster's token, printed by `ray get-auth-token` on the "
                            "head, in RAY_AUTH_TOKEN or in the file RAY_AUTH_TOKEN_PATH names)") from None
        raise UserError(f"the Ray cluster at {address.shown} requires a token and none was sent: set RAY_AUTH_TOKEN, "
                        "or RAY_AUTH_TOKEN_PATH to a file holding the cluster's token (default ~/.ray/auth_token)") from None
    except ConnectionError as err:  # the SDK's request failed after the probe reached the port (JobsClient.connect)
        raise ServiceUnavailable(f"the Ray cluster at {address.shown} ({address.source}) accepted the connection, "
                                 f"but its job API gave no answer (Ray's SDK: {str(err).rstrip('.')}) (hint: check "
                                 "that the address is the head's dashboard, e.g. http://HEAD:8265, and that the "
                                 "dashboard is up; a proxy in front of it may have no head behind it)") from None
    except (RuntimeError, ValueError) as err:
        text = str(err)
        if job_id is not None and ("does not exist" in text or "status code 404" in text):
            raise UserError(f"no job {job_id!r} on the Ray cluster at {address.shown}: "
                            "list the cluster's jobs with `interlingua jobs list`") from None
        if "status code" in text or "Jobs API" in text or "not compatible" in text:
            raise UserError(f"the Ray cluster at {address.shown} refused the request: {_first_line(text)}") from None
        raise
    except OSError as err:  # requests' exceptions derive from OSError
        raise UserError(f"talking to the Ray cluster at {address.shown} failed: {err}") from None


def _quiet_ray_logging() -> None:
    """Ray's SDK logs INFO lines (package uploads, websocket closes) the user did not ask for."""
    names = [n for n in logging.root.manager.loggerDict if n == "ray" or n.startswith("ray.")]
    for name in names + ["ray.dashboard.modules.dashboard_sdk", "ray.dashboard.modules.job.sdk"]:
        logging.getLogger(name).setLevel(logging.WARNING)


def write_stdout(chunk: str) -> None:
    sys.stdout.write(chunk if chunk.endswith("\n") or not chunk else chunk + "\n")
    sys.stdout.flush()
