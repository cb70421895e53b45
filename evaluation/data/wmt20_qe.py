"""WMT20 QE task 1 (MLQE-PE, Fomicheva et al. 2020): ``{src}-{tgt}/{split}.{src}{tgt}.df.short.tsv`` with
split ``train``, ``dev`` or ``test20``, tab-separated with a header ``index original translation scores mean
z_scores z_mean model_scores`` (``z_mean``: mean z-normalised direct-assessment score, the task-1 target).
No quoting: quote characters are part of the sentences."""

from __future__ import annotations

import math

from interlingua.evaluation.data.files import read_tsv_dicts, read_tsv_header
from interlingua.evaluation.data.records import ScoredPairs


def load_wmt20_qe(url: str, score_column: str = "z_mean") -> ScoredPairs:
    """Source sentences (``first``), machine translations (``second``) and human scores. ValueError when
    the header lacks ``original``, ``translation`` or ``score_column``; rows with another field count or
    a score that is not a finite number are rejected."""
    header = read_tsv_header(url)
    missing = [c for c in ("original", "translation", score_column) if c not in header]
    if missing:
        raise ValueError(f"{url} lacks column(s) {missing}; its header is {header} (expected original, translation, {score_column})")
    data = ScoredPairs()
    for number, row in read_tsv_dicts(url):
        if "__error__" in row:
            data.rejected.append((f"{url}:{number}", row["__error__"]))
            continue
        try:
            score = float(row[score_column])
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            data.rejected.append((f"{url}:{number}", f"{score_column} {row[score_column]!r} is not a finite number"))
            continue
        data.first.append(row["original"])
        data.second.append(row["translation"])
        data.scores.append(score)
    return data
