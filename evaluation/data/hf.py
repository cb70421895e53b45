"""The same containers from a Hugging Face ``datasets`` id or local dataset folder (imported lazily).

Examples: ``load_hf_labelled_pairs("xnli", "fr", "test", "premise", "hypothesis", "label")``,
``load_hf_scored_pairs("mteb/sts17-crosslingual-sts", "en-de", "test", "sentence1", "sentence2", "score")``."""

from __future__ import annotations

from interlingua.evaluation.data.records import LabelledPairs, LabelledTexts, ScoredPairs


def _rows(dataset_id: str, config: str | None, split: str, columns: tuple[str, ...]):
    import datasets

    table = datasets.load_dataset(dataset_id, config, split=split)
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise ValueError(f"{dataset_id}/{config}/{split} lacks columns {missing}; it has {table.column_names}")
    return table.select_columns(list(columns)).to_list()


def load_hf_scored_pairs(dataset_id: str, config: str | None, split: str, first: str, second: str, score: str) -> ScoredPairs:
    data = ScoredPairs()
    for row in _rows(dataset_id, config, split, (first, second, score)):
        data.first.append(row[first])
        data.second.append(row[second])
        data.scores.append(float(row[score]))
    return data


def load_hf_labelled_texts(dataset_id: str, config: str | None, split: str, text: str, label: str) -> LabelledTexts:
    data = LabelledTexts()
    for row in _rows(dataset_id, config, split, (text, label)):
        data.texts.append(row[text])
        data.labels.append(str(row[label]))
    return data


def load_hf_labelled_pairs(dataset_id: str, config: str | None, split: str, first: str, second: str, label: str) -> LabelledPairs:
    data = LabelledPairs()
    for row in _rows(dataset_id, config, split, (first, second, label)):
        data.first.append(row[first])
        data.second.append(row[second])
        data.labels.append(str(row[label]))
    return data
