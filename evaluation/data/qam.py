"""XGLUE QAM (question-answer matching): ``QAM.train`` (English) and ``QAM.{dev,test}.{lang}`` with
lines ``question<TAB>passage<TAB>label`` (label 1 = the passage answers the question)."""

from __future__ import annotations

from interlingua.evaluation.data.files import read_tsv_rows
from interlingua.evaluation.data.records import LabelledPairs


def load_qam(url: str) -> LabelledPairs:
    """One QAM file; rows without 3 fields or with a label other than 0/1 are rejected."""
    data = LabelledPairs()
    for number, fields in read_tsv_rows(url):
        if len(fields) != 3 or fields[2].strip() not in ("0", "1"):
            data.rejected.append((f"{url}:{number}", "expected 'question<TAB>passage<TAB>0|1'"))
        else:
            data.first.append(fields[0])
            data.second.append(fields[1])
            data.labels.append(fields[2].strip())
    return data
