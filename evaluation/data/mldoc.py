"""MLDoc (Schwenk & Li 2018) files as produced by its generation script: ``{language}.train.{size}``,
``{language}.dev``, ``{language}.test`` with lines ``LABEL<TAB>document`` (labels CCAT, ECAT, GCAT, MCAT)."""

from __future__ import annotations

from interlingua.evaluation.data.files import read_tsv_rows
from interlingua.evaluation.data.records import LabelledTexts

MLDOC_LABELS = ("CCAT", "ECAT", "GCAT", "MCAT")


def load_mldoc(url: str) -> LabelledTexts:
    """One MLDoc file; rows with an unknown label or a missing text are rejected."""
    data = LabelledTexts()
    for number, fields in read_tsv_rows(url):
        if len(fields) < 2 or fields[0] not in MLDOC_LABELS:
            data.rejected.append((f"{url}:{number}", f"expected '<one of {MLDOC_LABELS}><TAB>text'"))
        else:
            data.labels.append(fields[0])
            data.texts.append("\t".join(fields[1:]))
    return data
