"""STS 2017 loaders: the extended set (Reimers & Gurevych 2020: ``STS.{pair}.txt`` lines
``sentence1<TAB>sentence2<TAB>score``) and the official SemEval files (``STS.input.track*.{pair}.txt``
with two sentences per line plus ``STS.gs.track*.{pair}.txt`` with one gold score per line)."""

from __future__ import annotations

from interlingua.evaluation.data.files import read_lines, read_tsv_rows
from interlingua.evaluation.data.records import ScoredPairs


def _parse_score(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def load_sts2017_extended(url: str) -> ScoredPairs:
    """Rows ``s1<TAB>s2<TAB>score`` (0-5). Rows with another field count or a non-numeric score are rejected."""
    pairs = ScoredPairs()
    for number, fields in read_tsv_rows(url):
        score = _parse_score(fields[2]) if len(fields) == 3 else None
        if len(fields) != 3:
            pairs.rejected.append((f"{url}:{number}", f"expected 3 tab-separated fields, got {len(fields)}"))
        elif score is None:
            pairs.rejected.append((f"{url}:{number}", f"score {fields[2]!r} is not a number"))
        else:
            pairs.first.append(fields[0])
            pairs.second.append(fields[1])
            pairs.scores.append(score)
    return pairs


def load_sts2017_official(input_url: str, gold_url: str) -> ScoredPairs:
    """Official SemEval 2017 files: input lines ``s1<TAB>s2`` and gold lines (one score, or empty when
    the pair is unscored; such pairs are rejected as in the official scorer)."""
    inputs, golds = read_lines(input_url), read_lines(gold_url)
    if len(inputs) != len(golds):
        raise ValueError(f"{input_url} has {len(inputs)} lines but {gold_url} has {len(golds)}; they must be aligned")
    pairs = ScoredPairs()
    for number, (line, gold) in enumerate(zip(inputs, golds), start=1):
        fields, score = line.split("\t"), _parse_score(gold.strip())
        if len(fields) < 2:
            pairs.rejected.append((f"{input_url}:{number}", "expected 2 tab-separated sentences"))
        elif score is None:
            pairs.rejected.append((f"{gold_url}:{number}", f"gold {gold!r} is not a number"))
        else:
            pairs.first.append(fields[0])
            pairs.second.append(fields[1])
            pairs.scores.append(score)
    return pairs
