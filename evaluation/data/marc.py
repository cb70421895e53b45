"""Multilingual Amazon Reviews Corpus (Keung et al. 2020): JSON-lines files
``dataset_{lang}_{split}.json`` with ``review_body``, ``review_title`` and ``stars`` (1-5); the task is
predicting the star rating from the review body (optionally title + body)."""

from __future__ import annotations

import json

from interlingua.evaluation.data.files import read_lines
from interlingua.evaluation.data.records import LabelledTexts


def load_marc(url: str, with_title: bool = False) -> LabelledTexts:
    """Texts (body, or "title. body" when ``with_title``) and star labels "1".."5"."""
    data = LabelledTexts()
    for number, line in enumerate(read_lines(url), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            stars, body = str(int(record["stars"])), record["review_body"]
        except (ValueError, KeyError, TypeError) as err:
            data.rejected.append((f"{url}:{number}", f"unreadable review: {err}"))
            continue
        if stars not in {"1", "2", "3", "4", "5"} or not body.strip():
            data.rejected.append((f"{url}:{number}", f"stars {stars} outside 1-5 or empty body"))
            continue
        data.texts.append(f"{record.get('review_title', '')}. {body}" if with_title else body)
        data.labels.append(stars)
    return data
