"""PAWS-X (Yang et al. 2019): ``x-final/{lang}/{train,translated_train,dev_2k,test_2k}.tsv`` with a
header ``id sentence1 sentence2 label`` (label 1 = paraphrase, 0 = not)."""

from __future__ import annotations

from interlingua.evaluation.data.files import read_tsv_dicts
from interlingua.evaluation.data.records import LabelledPairs


def load_pawsx(url: str) -> LabelledPairs:
    """One PAWS-X file; rows with a label other than 0/1 or an empty sentence are rejected
    (the English train file has a few such rows)."""
    data = LabelledPairs()
    for number, row in read_tsv_dicts(url):
        first, second, label = row.get("sentence1", ""), row.get("sentence2", ""), row.get("label")
        if "__error__" in row:
            data.rejected.append((f"{url}:{number}", row["__error__"]))
        elif label not in ("0", "1") or not first.strip() or not second.strip():
            data.rejected.append((f"{url}:{number}", f"label {label!r} not 0/1 or empty sentence"))
        else:
            data.first.append(first)
            data.second.append(second)
            data.labels.append(label)
    return data
