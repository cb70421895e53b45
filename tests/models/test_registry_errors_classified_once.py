"""``registry_error`` asks once whether a failure is MLflow's report of a download's failed files, then hands that
verdict to every check that needs it (it asked up to four times: directly and through ``store_unanswered`` and
``unanswered``)."""

from __future__ import annotations

import pytest

from interlingua.core.errors import ServiceUnavailable, UserError

_REPORT = "The following failures occurred while downloading one or more artifacts from s3://models/enc:\n"


@pytest.mark.parametrize(("failure", "kind", "says"), [
    ('Could not connect to the endpoint URL: "https://models.s3.amazonaws.com/enc/MLmodel"', ServiceUnavailable,
     "did not answer"),
    ("An error occurred (AccessDenied) when calling the GetObject operation: Access Denied", UserError,
     "did not give its files"),
])
def test_a_download_report_is_recognised_once_per_error(monkeypatch, failure, kind, says):
    from mlflow.exceptions import MlflowException

    from interlingua.models import registry_errors

    calls = []
    recognise = registry_errors.download_failures

    def counted(err):
        calls.append(err)
        return recognise(err)

    monkeypatch.setattr(registry_errors, "download_failures", counted)
    error = registry_errors.registry_error("models:/enc/1", MlflowException(f"{_REPORT}##### File MLmodel #####\n{failure}"))
    assert type(error) is kind and f"s3://models/enc) {says} (MLmodel: " in str(error)
    assert len(calls) == 1
