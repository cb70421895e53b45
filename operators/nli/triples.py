"""NLI pairs → (premise, entailment, contradiction) triples, the training unit of supervised SimCSE
(Gao et al. 2021) that Cai et al. (2022) translate and parse.

Input rows are NLI pairs in either of two conventions:

- SNLI / MultiNLI JSON lines: ``sentence1`` (premise), ``sentence2`` (hypothesis), ``gold_label``
  (``entailment`` / ``neutral`` / ``contradiction`` / ``-``), ids ``promptID`` (MultiNLI),
  ``captionID`` / ``pairID`` (SNLI);
- Hugging Face ``snli`` / ``multi_nli`` columns: ``premise``, ``hypothesis``, integer ``label``
  (0 entailment, 1 neutral, 2 contradiction, -1 no gold label).

Pairs are grouped by premise text (whitespace-normalized). A premise with ``k`` entailment
hypotheses yields ``k`` triples; the ``i``-th entailment is paired with contradiction
``i mod m`` of its ``m`` contradictions, so every entailment is used once and contradictions are
reused only when there are fewer of them. Premises without an entailment or without a contradiction
are dropped and counted. Neutral and no-gold pairs are counted as unused; malformed rows are kept
aside with a reason.

Triple ids are ``<premise id>-<i>``: the premise id is the row's ``promptID`` / ``captionID`` (of the
premise's first row), else ``p`` + a hash of the premise text. An id that several distinct premise texts
carry (an SNLI caption id over differently written captions, ids reused across files) gets
``-`` + 8 hex digits of the SHA-1 of each one's text appended, so every premise has its own triples'
ids (the same input gives the same ids, in any run).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

ENTAILMENT = "entailment"
NEUTRAL = "neutral"
CONTRADICTION = "contradiction"
NO_GOLD = "-"
#: Key a reader puts in a row for a line that is not valid JSON (see ``sources.read_nli_rows``).
JSON_ERROR = "_json_error"
#: Key a reader puts in a row for a line whose bytes are not UTF-8, its reason the value.
ENCODING_ERROR = "_encoding_error"
#: Unicode's control characters (category Cc) but tab, newline and carriage return.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_HF_LABELS = {0: ENTAILMENT, 1: NEUTRAL, 2: CONTRADICTION, -1: NO_GOLD}


@dataclass(frozen=True)
class NliTriple:
    """One training triple; ``triple_id`` is ``<premise id>-<index within the premise>`` (unique: module docstring)."""

    triple_id: str
    premise: str
    entailment: str
    contradiction: str


@dataclass
class TripleBuild:
    """Triples plus what was not turned into a triple, with counts by reason."""

    triples: list[NliTriple] = field(default_factory=list)
    dropped_premises: Counter[str] = field(default_factory=Counter)
    unused_pairs: Counter[str] = field(default_factory=Counter)
    malformed_rows: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "triples": len(self.triples),
            "premises_dropped": dict(self.dropped_premises),
            "pairs_unused": dict(self.unused_pairs),
            "rows_malformed": len(self.malformed_rows),
        }


@dataclass
class _Premise:
    premise_id: str
    entailments: list[str] = field(default_factory=list)
    contradictions: list[str] = field(default_factory=list)


def _normalize(text: str) -> str:
    return " ".join(text.split())


def _label(row: Mapping[str, Any]) -> str | None:
    if "gold_label" in row:
        value = row["gold_label"]
        return str(value) if value in (ENTAILMENT, NEUTRAL, CONTRADICTION, NO_GOLD) else None
    value = row.get("label")
    if isinstance(value, str) and value in (ENTAILMENT, NEUTRAL, CONTRADICTION, NO_GOLD):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return _HF_LABELS.get(value)
    return None


def _text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def _premise_id(row: Mapping[str, Any], premise: str) -> str:
    for key in ("promptID", "captionID"):
        if row.get(key) not in (None, ""):
            return str(row[key])
    return "p" + _text_hash(premise)[:12]


def _unique_premise_ids(premises: Mapping[str, _Premise]) -> dict[str, str]:
    """Premise text → its id, with a hash of the text appended to an id that several texts share."""
    texts_per_id = Counter(group.premise_id for group in premises.values())
    return {premise: group.premise_id if texts_per_id[group.premise_id] == 1
            else f"{group.premise_id}-{_text_hash(premise)[:8]}" for premise, group in premises.items()}


def text_problem(text: str) -> str:
    """Why ``text`` cannot be a sentence of the corpus, or ``""``: a lone surrogate (``"\\ud800"`` in JSON) does not
    encode as UTF-8, so the shard write failed on it; a NUL or other control character (tab and newlines aside,
    whitespace) Apertium deletes silently, merging the words around it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"not valid Unicode: {error.reason} (U+{ord(text[error.start]):04X} at character {error.start})"
    bad = _CONTROL.search(text)
    return "" if bad is None else f"control character U+{ord(bad.group()):04X} at character {bad.start()}"


def writable_row(row: Mapping[str, Any]) -> dict[str, Any] | str:
    """A malformed row as its reject record keeps it: as read, or, when it holds text UTF-8 cannot carry (a lone
    surrogate), its JSON with every non-ASCII character escaped (the row intact, and writable)."""
    try:
        json.dumps(row, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(row, ensure_ascii=True, default=str)
    return dict(row)


def normalize_pair(row: Mapping[str, Any]) -> tuple[str, str, str, str] | str:
    """(premise, hypothesis, label, premise id) of a row in either convention, or a reason string."""
    if JSON_ERROR in row:
        return f"invalid JSON: {row[JSON_ERROR]}"
    if ENCODING_ERROR in row:
        return str(row[ENCODING_ERROR])
    premise = row.get("sentence1", row.get("premise"))
    hypothesis = row.get("sentence2", row.get("hypothesis"))
    if not isinstance(premise, str) or not premise.strip():
        return "missing premise"
    if not isinstance(hypothesis, str) or not hypothesis.strip():
        return "missing hypothesis"
    for role, text in (("premise", premise), ("hypothesis", hypothesis)):
        if problem := text_problem(text):
            return f"{role}: {problem}"
    label = _label(row)
    if label is None:
        return f"unknown label {row.get('gold_label', row.get('label'))!r}"
    premise = _normalize(premise)
    return premise, _normalize(hypothesis), label, _premise_id(row, premise)


def build_triples(rows: Iterable[Mapping[str, Any]]) -> TripleBuild:
    """Group NLI pairs by premise and build triples (rules in the module docstring)."""
    build = TripleBuild()
    premises: dict[str, _Premise] = {}
    for row in rows:
        pair = normalize_pair(row)
        if isinstance(pair, str):
            build.malformed_rows.append({"reason": pair, "row": writable_row(row)})
            continue
        premise, hypothesis, label, premise_id = pair
        group = premises.setdefault(premise, _Premise(premise_id))
        if label == ENTAILMENT:
            group.entailments.append(hypothesis)
        elif label == CONTRADICTION:
            group.contradictions.append(hypothesis)
        else:
            build.unused_pairs[label] += 1
    premise_ids = _unique_premise_ids(premises)
    for premise, group in premises.items():
        if not group.entailments:
            build.dropped_premises["no entailment"] += 1
            continue
        if not group.contradictions:
            build.dropped_premises["no contradiction"] += 1
            continue
        for i, entailment in enumerate(group.entailments):
            contradiction = group.contradictions[i % len(group.contradictions)]
            build.triples.append(NliTriple(f"{premise_ids[premise]}-{i}", premise, entailment, contradiction))
    return build
