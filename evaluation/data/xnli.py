"""XNLI (Conneau et al. 2018): ``xnli.dev.tsv`` / ``xnli.test.tsv`` (header; columns ``language``,
``gold_label``, ``sentence1``, ``sentence2``, ...), and the English MultiNLI training data in XNLI-MT form
``multinli.train.en.tsv`` (header ``premise hypo label``; "contradictory" means contradiction)."""

from __future__ import annotations

from interlingua.evaluation.data.files import read_tsv_dicts
from interlingua.evaluation.data.records import LabelledPairs

NLI_LABELS = ("entailment", "neutral", "contradiction")
_ALIASES = {"contradictory": "contradiction"}


def _add(data: LabelledPairs, where: str, first: str | None, second: str | None, label: str | None) -> None:
    label = _ALIASES.get(label, label)
    if first is None or second is None or label not in NLI_LABELS:
        data.rejected.append((where, f"missing sentence or label {label!r} not in {NLI_LABELS}"))
    else:
        data.first.append(first)
        data.second.append(second)
        data.labels.append(label)


def load_xnli(url: str, language: str) -> LabelledPairs:
    """Pairs of one language from an official XNLI dev/test file."""
    data = LabelledPairs()
    for number, row in read_tsv_dicts(url):
        if "__error__" in row:
            data.rejected.append((f"{url}:{number}", row["__error__"]))
        elif row.get("language") == language:
            _add(data, f"{url}:{number}", row.get("sentence1"), row.get("sentence2"), row.get("gold_label"))
    return data


def load_xnli_mt_train(url: str) -> LabelledPairs:
    """XNLI-MT style training file with columns premise, hypo, label."""
    data = LabelledPairs()
    for number, row in read_tsv_dicts(url):
        if "__error__" in row:
            data.rejected.append((f"{url}:{number}", row["__error__"]))
        else:
            _add(data, f"{url}:{number}", row.get("premise"), row.get("hypo"), row.get("label"))
    return data
