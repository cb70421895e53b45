"""STS 2017 loaders.

* Extended set (Reimers & Gurevych 2020, ``STS2017-extended.zip``): ``STS.{l1}-{l2}.txt`` with lines
  ``sentence1<TAB>sentence2<TAB>score`` (0-5). Read as sentence-transformers does: each line is stripped
  of surrounding whitespace, then split on tabs.
* Official SemEval-2017 Task 1 files: ``STS2017.eval.v1.1/STS.input.track{1,2,3,4a,4b,5,6}.{l1}-{l2}.txt``
  with lines ``sentence1<TAB>sentence2`` and ``STS2017.gs/STS.gs.track*.{l1}-{l2}.txt`` with one gold score
  per line. Read as SentEval does: input lines split on tabs (not stripped); a pair whose gold line is
  empty is unscored and left out (``skipped``), as the official scorer does.

Blank lines of the extended format and unscored official pairs go to ``skipped``; malformed rows (wrong
field count, a score that is not a finite number) go to ``rejected``."""

from __future__ import annotations

import math

from interlingua.evaluation.data.files import read_lines
from interlingua.evaluation.data.records import ScoredPairs


def _parse_score(text: str) -> float | None:
    """The score as a finite float, or None (not a number, NaN or infinite)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def load_sts2017_extended(url: str) -> ScoredPairs:
    """Rows ``s1<TAB>s2<TAB>score``. Rows with another field count or a non-finite score are rejected."""
    pairs = ScoredPairs()
    for number, line in enumerate(read_lines(url), start=1):
        where = f"{url}:{number}"
        if not line.strip():
            pairs.skipped.append((where, "blank line"))
            continue
        fields = line.strip().split("\t")
        if len(fields) != 3:
            pairs.rejected.append((where, f"expected 3 tab-separated fields (sentence1, sentence2, score), got {len(fields)}"))
            continue
        score = _parse_score(fields[2])
        if score is None:
            pairs.rejected.append((where, f"score {fields[2]!r} is not a finite number"))
        else:
            pairs.first.append(fields[0])
            pairs.second.append(fields[1])
            pairs.scores.append(score)
    return pairs


def load_sts2017_official(input_url: str, gold_url: str) -> ScoredPairs:
    """Official SemEval 2017 files: input lines ``s1<TAB>s2`` and gold lines (one score, or empty when
    the pair is unscored: such pairs are skipped). ValueError when the two files differ in line count."""
    inputs, golds = read_lines(input_url), read_lines(gold_url)
    if len(inputs) != len(golds):
        raise ValueError(f"{input_url} has {len(inputs)} lines but {gold_url} has {len(golds)}; they must be aligned")
    pairs = ScoredPairs()
    for number, (line, gold) in enumerate(zip(inputs, golds), start=1):
        fields = line.split("\t")
        if not gold.strip():
            pairs.skipped.append((f"{gold_url}:{number}", "unscored pair (empty gold line)"))
            continue
        score = _parse_score(gold.strip())
        if len(fields) != 2:
            pairs.rejected.append((f"{input_url}:{number}", f"expected 2 tab-separated sentences, got {len(fields)} fields"))
        elif score is None:
            pairs.rejected.append((f"{gold_url}:{number}", f"gold {gold!r} is not a finite number"))
        else:
            pairs.first.append(fields[0])
            pairs.second.append(fields[1])
            pairs.scores.append(score)
    return pairs
