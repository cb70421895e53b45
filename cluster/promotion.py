"""Gated alias promotion in the MLflow model registry.

``promote("models:/NAME/VERSION", alias, tasks)`` evaluates the candidate version and the version the
alias names now on the same tasks and seeds, in one run, and moves the alias only when the rule of
:func:`decide` says so. Every decision that is not a dry run is recorded: ``interlingua.promotion.*``
tags on the candidate version and an MLflow run (experiment ``interlingua-promotion``) holding
``decision.json`` (both score tables, per-seed values, the data versions, the code commit) and the table.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Sequence

from interlingua.core import tracking
from interlingua.core.errors import ServiceUnavailable, UserError
from interlingua.evaluation.tasks.records import Measurement
from interlingua.evaluation.tasks.spec import TaskSpec
from interlingua.models.registry_errors import (REGISTRY_HINT, download_failures, first_line, missing_files,
                                                not_mlflow, registry_error, store_unanswered, unanswered)

PROMOTION_EXPERIMENT = "interlingua-promotion"
TAG_PREFIX = "interlingua.promotion"


@dataclass(frozen=True)
class TaskComparison:
    task: str            # "name/language"
    candidate: float     # primary metric, mean over seeds
    holder: float | None

    @property
    def delta(self) -> float | None:
        return None if self.holder is None else self.candidate - self.holder


@dataclass(frozen=True)
class Decision:
    promote: bool
    reason: str
    margin: float
    rows: list[TaskComparison]
    candidate_mean: float
    holder_mean: float | None


def decide(candidate: dict[str, float], holder: dict[str, float] | None, margin: float, *,
           candidate_label: str = "the candidate", holder_label: str = "the holder") -> Decision:
    """The promotion rule over the gating tasks' primary scores (higher is better).

    - a score that is not a finite number (a collapsed encoder's STS correlation is nan), the candidate's or
      the holder's: do not promote — nothing can be compared;
    - no holder (the alias names no version yet): promote — the first promotion;
    - otherwise promote only if the candidate is worse than the holder by at most ``margin`` on every
      task **and** its mean over the tasks is strictly higher.
    """
    if not math.isfinite(margin) or margin < 0:  # nan compares false: no task would count as worse
        raise ValueError(f"margin must be a finite number >= 0; got {margin}")
    if not candidate:
        raise ValueError("no gating task produced a score")
    if holder is not None and set(holder) != set(candidate):
        raise ValueError(f"candidate and holder were scored on different tasks: {sorted(candidate)} vs {sorted(holder)}")
    rows = [TaskComparison(task, candidate[task], None if holder is None else holder[task]) for task in candidate]
    candidate_mean = sum(candidate.values()) / len(candidate)
    holder_mean = None if holder is None else sum(holder.values()) / len(holder)
    for label, scores in ((candidate_label, candidate), (holder_label, holder or {})):
        for task, value in scores.items():  # nan compares false: "worse" and "not above" were never true
            if not math.isfinite(value):
                return Decision(False, f"{label} scored {_score_name(value)} on task {task}", margin, rows,
                                candidate_mean, holder_mean)
    if holder is None:
        return Decision(True, "first promotion: the alias has no holder", margin, rows, candidate_mean, None)
    worse = [r for r in rows if r.delta < -margin]
    if worse:
        worst = min(worse, key=lambda r: r.delta)
        reason = (f"worse than the holder by more than {margin:g} on {len(worse)} task(s); "
                  f"worst {worst.task}: {worst.delta:+.2f}")
        return Decision(False, reason, margin, rows, candidate_mean, holder_mean)
    if candidate_mean <= holder_mean:
        reason = f"mean {candidate_mean:.2f} is not above the holder's {holder_mean:.2f}"
        return Decision(False, reason, margin, rows, candidate_mean, holder_mean)
    reason = (f"mean {candidate_mean:.2f} > holder's {holder_mean:.2f} and no task worse by more than {margin:g}")
    return Decision(True, reason, margin, rows, candidate_mean, holder_mean)


def _score_name(value: float) -> str:
    return "NaN" if math.isnan(value) else f"{value}"


def primary_scores(measurements: Sequence[Measurement], model: str) -> dict[str, float]:
    """{"task/language": mean over seeds of the primary metric} for one model's measurements."""
    grouped: dict[str, list[float]] = {}
    for m in measurements:
        if m.model == model and m.primary:
            grouped.setdefault(f"{m.task}/{m.language}", []).append(m.value)
    return {task: sum(values) / len(values) for task, values in grouped.items()}


def format_decision(decision: Decision, candidate_label: str, holder_label: str | None) -> str:
    header = ["task", candidate_label, holder_label or "(no holder)", "delta"]
    body = [[r.task, f"{r.candidate:.2f}", "-" if r.holder is None else f"{r.holder:.2f}",
             "-" if r.delta is None else f"{r.delta:+.2f}"] for r in decision.rows]
    body.append(["mean", f"{decision.candidate_mean:.2f}",
                 "-" if decision.holder_mean is None else f"{decision.holder_mean:.2f}",
                 "-" if decision.holder_mean is None else f"{decision.candidate_mean - decision.holder_mean:+.2f}"])
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


@dataclass(frozen=True)
class ModelVersionRef:
    name: str
    version: str

    @property
    def uri(self) -> str:
        return f"models:/{self.name}/{self.version}"


def parse_version_uri(uri: str) -> ModelVersionRef:
    """``models:/NAME/VERSION`` -> its parts; anything else is a UserError (aliases move, so a candidate
    must name one immutable version)."""
    rest = uri[len("models:/"):] if uri.startswith("models:/") else None
    name, _, version = (rest or "").rpartition("/")
    if not rest or not name or "@" in rest or not version.isdigit():
        raise UserError(f"candidate must be models:/NAME/VERSION (a registered version number); got {uri!r}")
    return ModelVersionRef(name, version)


@dataclass
class PromotionResult:
    candidate: ModelVersionRef
    alias: str
    holder: ModelVersionRef | None
    decision: Decision
    table: str
    moved: bool
    dry_run: bool
    record: dict = field(default_factory=dict)
    run_id: str | None = None


def promote(candidate_uri: str, alias: str, tasks: Sequence[TaskSpec], *, seeds: Sequence[int] = (1,),
            margin: float = 0.0, dry_run: bool = False, data_versions: dict[str, str] | None = None,
            client=None, wrap_encoder=None) -> PromotionResult:
    """Evaluate the candidate and the alias's holder on ``tasks`` and move ``alias`` when :func:`decide`
    says so (see the module docstring). ``wrap_encoder`` (e.g. an embedding cache) wraps each loaded encoder."""
    from mlflow.tracking import MlflowClient

    from interlingua.evaluation.runner import evaluate_models, release_task_data
    from interlingua.models.load import load_text_encoder

    if not tasks:
        raise UserError("no gating task given; pass --tasks")
    from interlingua.core.names import alias_problem

    if not alias or alias_problem(alias):
        raise UserError(f"alias must be a plain name such as 'champion' ({alias_problem(alias) or 'empty'}); got {alias!r}")
    if not math.isfinite(margin) or margin < 0:
        raise UserError(f"margin must be a finite number >= 0; got {margin}")
    candidate = parse_version_uri(candidate_uri)
    try:
        client = client or MlflowClient()
    except Exception as err:  # a tracking or registry URI whose scheme MLflow does not take: one line, exit 2
        raise registry_error(candidate.uri, err) from None
    _check_version_exists(client, candidate)
    mlmodel = _check_servable(client, candidate)  # read once: the candidate's folder is found from it too
    holder = _alias_holder(client, candidate.name, alias)
    if holder is not None and holder.version == candidate.version:
        raise UserError(f"{candidate.uri} already holds @{alias}; nothing to decide")

    labels = {candidate.uri: candidate}
    if holder is not None:
        labels[holder.uri] = holder
    encoders = {}
    for label in labels:
        encoder = load_text_encoder(label, mlmodel=mlmodel if label == candidate.uri else None)
        encoders[label] = wrap_encoder(encoder) if wrap_encoder else encoder
    measurements = []
    for task in tasks:  # one task at a time, so a failure names the task and the model
        try:
            for label, encoder in encoders.items():  # both models on the task's one read
                try:
                    measurements += evaluate_models({label: encoder}, [task], seeds, release=False)
                except Exception as err:  # a task a model cannot run: one clear line, not a traceback
                    raise UserError(f"{label} cannot run task {task.name} ({task.language}): "
                                    f"{type(err).__name__}: {err}") from err
        finally:
            release_task_data([task])

    scores = {label: primary_scores(measurements, label) for label in labels}
    try:
        decision = decide(scores[candidate.uri], scores[holder.uri] if holder else None, margin,
                          candidate_label=candidate.uri, holder_label=holder.uri if holder else "the holder")
    except ValueError as err:  # a task that gave one model no primary score: one line, nothing moved
        raise UserError(f"cannot compare {candidate.uri} with {holder.uri if holder else 'no holder'}: {err} "
                        "(hint: a gating task produced no primary score for one of them; check those tasks "
                        "with `interlingua eval`)") from None
    table = format_decision(decision, candidate.uri, holder.uri if holder else None)
    record = {
        "candidate": candidate.uri, "alias": alias, "holder": holder.uri if holder else None,
        "promote": decision.promote, "reason": decision.reason, "margin": margin, "seeds": list(seeds),
        "tasks": [f"{t.name}/{t.language}" for t in tasks], "scores": scores,
        "candidate_mean": decision.candidate_mean, "holder_mean": decision.holder_mean,
        "measurements": [asdict(m) for m in measurements], "data_versions": dict(data_versions or {}),
        "git_commit": _git_commit(), "decided_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    result = PromotionResult(candidate, alias, holder, decision, table, moved=False, dry_run=dry_run, record=record)
    if dry_run:
        return result
    record["decision"] = "promoted" if decision.promote else "rejected"
    if decision.promote:
        _move_alias(client, result)
    moved = f"@{alias} now names {candidate.uri}; " if result.moved else ""
    result.run_id = _recorded(client, candidate, alias, record, table, moved)
    return result


def _move_alias(client, result: PromotionResult) -> None:
    """Set the alias to the candidate if it still names the holder the candidate was compared with; otherwise the
    decision becomes "holder changed" (not moved: the comparison was with a version that no longer holds it).

    MLflow has no compare-and-set for aliases: the holder is read again right before the set, which narrows the
    window in which a concurrent promotion is overwritten to the time between those two calls (milliseconds,
    not the evaluation's minutes); it does not close it. Promotions of one alias are meant to run one at a time."""
    candidate, alias, record = result.candidate, result.alias, result.record
    now = _alias_holder(client, candidate.name, alias)
    if now != result.holder:
        reason = (f"holder changed during evaluation ({result.holder.uri if result.holder else 'no holder'} -> "
                  f"{now.uri if now else 'no holder'}); rerun")
        record.update(decision="holder changed", promote=False, reason=reason)
        result.decision = replace(result.decision, promote=False, reason=reason)
        return
    try:
        client.set_registered_model_alias(candidate.name, alias, candidate.version)
    except Exception as err:  # recorded as such: a "promoted" record was left on a version the alias never named
        reason = f"the registry did not move @{alias}: {type(err).__name__}: {str(err).strip()[:200]}"
        record.update(decision="move failed", promote=False, reason=reason)
        result.run_id = _recorded(client, candidate, alias, record, result.table, f"{reason}; ")
        refused = ServiceUnavailable if unanswered(err) else UserError  # 69: an outage, rerun; 2: the registry said no
        raise refused(f"{reason} (recorded in MLflow run {result.run_id}; hint: rerun when the registry answers)") from None
    result.moved = True


def data_fingerprint(path: str | Path) -> str:
    """``sha256:<16 hex>`` over a data folder's (or file's) relative paths, sizes and contents: the data
    version of a benchmark pack or an official-set folder."""
    root = Path(path)
    if not root.exists():
        raise UserError(f"evaluation data {root} does not exist")
    digest = hashlib.sha256()
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    for file in files:
        digest.update(f"{file.relative_to(root) if file != root else file.name}\0{file.stat().st_size}\0".encode())
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return "sha256:" + digest.hexdigest()[:16]


def _check_version_exists(client, ref: ModelVersionRef) -> None:
    from mlflow.exceptions import MlflowException

    try:
        client.get_model_version(ref.name, ref.version)
    except Exception as err:
        if unanswered(err):  # a refused connection, a proxy's 502 after MLflow's retries: not "does not exist"
            raise ServiceUnavailable(f"the model registry did not answer whether {ref.uri} exists ({first_line(err)}); "
                                     f"nothing was evaluated or moved {REGISTRY_HINT}") from None
        if not_mlflow(err):  # some other web page answered: a wrong MLFLOW_TRACKING_URI, not a missing version
            raise registry_error(ref.uri, err) from None
        if not isinstance(err, MlflowException):
            raise
        try:
            versions = sorted(int(v.version) for v in client.search_model_versions(f"name='{ref.name}'"))
        except MlflowException:
            versions = []
        known = f"registered versions of {ref.name}: {', '.join(map(str, versions))}" if versions else \
            f"no registered model named {ref.name!r}"
        raise UserError(f"{ref.uri} does not exist ({known})") from err


def _check_servable(client, ref: ModelVersionRef) -> dict:
    """The version's ``MLmodel`` (plain YAML, the only file read here), or a refusal of a candidate that is not
    MLflow's ``sentence_transformers`` flavor alone, before any model loads. Versions of the older pyfunc layout hold
    a cloudpickled ``python_model``: interlingua evaluates their encoder folder without reading the pickle, but an
    alias on one would serve the pickle, which ``mlflow.pyfunc.load_model`` runs; so would a version whose
    ``MLmodel`` was rewritten to name a pickle beside its sentence-transformers folder
    (:func:`~interlingua.models.servable.check_servable`, over the registry's listing of the version's files)."""
    import tempfile

    import mlflow

    from interlingua.core.runtime import state_tempdir_root
    from interlingua.models.load import read_mlmodel
    from interlingua.models.servable import check_servable

    location = client.get_model_version_download_uri(ref.name, ref.version).rstrip("/")
    with tempfile.TemporaryDirectory(dir=state_tempdir_root()) as tmp:
        try:
            local = mlflow.artifacts.download_artifacts(artifact_uri=f"{location}/MLmodel", dst_path=tmp)
            mlmodel = read_mlmodel(local)
            flavors = mlmodel.get("flavors") or {}
        except Exception as err:  # no MLmodel (a plain folder registered by hand), unreadable YAML
            # the registry answered: the version's store did not (a missing MLmodel is no fault of the store)
            if store_unanswered(err) or (download_failures(err) and not missing_files(err)):
                raise registry_error(f"the MLmodel of {ref.uri}", err, pinned=ref.uri, store=location) from None
            if unanswered(err):  # the download got no answer: not "no readable MLmodel"
                raise ServiceUnavailable(f"the model registry did not answer for the MLmodel of {ref.uri} "
                                         f"({first_line(err)}); nothing was evaluated or moved "
                                         f"{REGISTRY_HINT}") from None
            raise UserError(f"{ref.uri} has no readable MLmodel ({type(err).__name__}); promotion serves "
                            "registered sentence_transformers models only") from None
    if "sentence_transformers" not in flavors:
        older = " (the older pyfunc layout: a cloudpickled python_model)" if "python_function" in flavors else ""
        raise UserError(f"{ref.uri} is an MLflow model with flavors {sorted(flavors)}{older}, not the "
                        "sentence_transformers flavor: an alias on it would serve what mlflow.pyfunc.load_model "
                        "unpickles (hint: register its encoder folder again with "
                        "interlingua.models.registry.log_and_register_encoder and promote that version)")
    check_servable(mlmodel, _artifact_files(location), ref.uri)
    return mlmodel


def _artifact_files(location: str):
    """The relative paths of the files under the artifact ``location`` (a version's storage location), as the
    artifact store lists them; nothing is downloaded."""
    from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository

    repository = get_artifact_repository(location)
    folders: list[str | None] = [None]
    while folders:
        for entry in repository.list_artifacts(folders.pop()):
            if entry.is_dir:
                folders.append(entry.path)
            else:
                yield entry.path


#: MLflow's answer for an alias that names no version (its stores raise INVALID_PARAMETER_VALUE with this message;
#: over REST the message comes back after "CODE: ").
_NO_SUCH_ALIAS = re.compile(r"^(?:[A-Z_]+: )?Registered model alias \S+ not found")


def _alias_holder(client, name: str, alias: str) -> ModelVersionRef | None:
    """The version ``alias`` names, or None when the registry answers that it names none. A failure for want of an
    answer (a proxy's 502, a refused connection: :func:`unanswered`) is a ServiceUnavailable, any other refusal
    (PERMISSION_DENIED) a UserError: read as "no holder", either made any candidate a first promotion."""
    from mlflow.exceptions import MlflowException

    try:
        return ModelVersionRef(name, str(client.get_model_version_by_alias(name, alias).version))
    except MlflowException as err:
        code = str(getattr(err, "error_code", ""))
        if code == "RESOURCE_DOES_NOT_EXIST" or _NO_SUCH_ALIAS.match(str(getattr(err, "message", err))):
            return None
        if not_mlflow(err):  # a web page, or an MLflow server without the alias endpoint: not a refusal of rights
            raise registry_error(f"models:/{name}@{alias}", err) from None
        if not unanswered(err):  # the registry answered no (PERMISSION_DENIED, say): a plain mistake, exit 2
            raise UserError(f"the model registry refused to say which version @{alias} of {name} names "
                            f"({first_line(err)}); nothing was moved (hint: check MLFLOW_TRACKING_URI and the "
                            f"credentials' rights on {name})") from None
        raise ServiceUnavailable(f"the model registry did not answer which version @{alias} of {name} names "
                                 f"({first_line(err)}); nothing was moved {REGISTRY_HINT}") from None


def _recorded(client, candidate: ModelVersionRef, alias: str, record: dict, table: str, done: str) -> str:
    """:func:`_record`, an outage of the registry (:func:`unanswered`) raised as :class:`ServiceUnavailable` saying
    the decision was not recorded (``done``: what happened before, the message's start): the same server had just
    failed the alias move, say."""
    try:
        return _record(client, candidate, alias, record, table)
    except Exception as err:
        if not unanswered(err):
            raise
        raise ServiceUnavailable(f"{done}the decision ({record['decision']}) was not recorded: the tracking server did "
                                 f"not answer ({first_line(err)}) {REGISTRY_HINT}") from None


def _record(client, candidate: ModelVersionRef, alias: str, record: dict, table: str) -> str:
    """An MLflow run with decision.json and decision.txt; tags on the candidate version point at it."""
    experiment = client.get_experiment_by_name(PROMOTION_EXPERIMENT)
    experiment_id = experiment.experiment_id if experiment else client.create_experiment(PROMOTION_EXPERIMENT)
    run = tracking.create_run(experiment_id, f"promote-{candidate.name}-v{candidate.version}-{alias}",
                              {f"{TAG_PREFIX}.candidate": candidate.uri, f"{TAG_PREFIX}.alias": alias}, client)
    run_id = run.info.run_id
    tracking.log_dict(record, "decision.json", run_id, client)
    tracking.log_text(f"{record['reason']}\n\n{table}\n", "decision.txt", run_id, client)
    tracking.log_params({"margin": record["margin"]}, run_id, client)
    for key, value in record["scores"].get(candidate.uri, {}).items():
        client.log_metric(run_id, f"candidate.{key}", value)
    for key, value in (record["scores"].get(record["holder"]) or {}).items():
        client.log_metric(run_id, f"holder.{key}", value)
    client.set_terminated(run_id)
    prefix = f"{TAG_PREFIX}.{alias}"
    tags = {
        "decision": record["decision"],
        "reason": record["reason"],
        "holder": record["holder"] or "none",
        "candidate_mean": f"{record['candidate_mean']:.4f}",
        "holder_mean": "none" if record["holder_mean"] is None else f"{record['holder_mean']:.4f}",
        "scores": json.dumps({"candidate": record["scores"].get(candidate.uri),
                              "holder": record["scores"].get(record["holder"])}, sort_keys=True)[:4900],
        "data_versions": json.dumps(record["data_versions"], sort_keys=True)[:4900],
        "git_commit": record["git_commit"] or "unknown",
        "run_id": run_id,
        "decided_at": record["decided_at"],
    }
    tracking.set_model_version_tags(candidate.name, candidate.version,
                                    {f"{prefix}.{key}": value for key, value in tags.items()}, client)
    return run_id


def _git_commit() -> str | None:
    from interlingua.operators.corpus.manifest import current_code_version

    return current_code_version().git_commit
