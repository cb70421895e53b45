"""BUCC 2017/2018 shared task files: ``{src}-{tgt}.{split}.{src}`` and ``.{tgt}`` with lines
``id<TAB>sentence``, and ``{src}-{tgt}.{split}.gold`` with lines ``src_id<TAB>tgt_id``
(split: ``sample``, ``training`` or ``test``; the test gold was never released, so it may be absent)."""

from __future__ import annotations

from interlingua.evaluation.data.files import join_url, read_tsv_rows
from interlingua.evaluation.data.records import MiningSplit

BUCC_SPLITS = ("sample", "training", "test")


def _read_side(url: str, split: MiningSplit) -> tuple[list[str], list[str]]:
    ids, texts, seen = [], [], set()
    for number, fields in read_tsv_rows(url):
        if len(fields) != 2:
            split.rejected.append((f"{url}:{number}", f"expected 'id<TAB>sentence', got {len(fields)} fields"))
        elif fields[0] in seen:
            split.rejected.append((f"{url}:{number}", f"duplicate id {fields[0]!r}"))
        else:
            seen.add(fields[0])
            ids.append(fields[0])
            texts.append(fields[1])
    return ids, texts


def load_bucc(directory: str, src_lang: str, split_name: str, tgt_lang: str = "en", require_gold: bool = True) -> MiningSplit:
    """One BUCC split. Gold pairs naming an unknown id are rejected (kept in ``rejected``)."""
    if split_name not in BUCC_SPLITS:
        raise ValueError(f"split_name must be one of {BUCC_SPLITS}; got {split_name!r}")
    import fsspec

    prefix = join_url(directory, f"{src_lang}-{tgt_lang}.{split_name}")
    split = MiningSplit()
    split.source_ids, split.source_texts = _read_side(f"{prefix}.{src_lang}", split)
    split.target_ids, split.target_texts = _read_side(f"{prefix}.{tgt_lang}", split)
    gold_url = f"{prefix}.gold"
    fs, path = fsspec.core.url_to_fs(gold_url)
    if not fs.exists(path):
        if require_gold:
            raise ValueError(f"gold file {gold_url} not found (pass require_gold=False for the unreleased test split)")
        return split
    known_src, known_tgt = set(split.source_ids), set(split.target_ids)
    for number, fields in read_tsv_rows(gold_url):
        if len(fields) != 2:
            split.rejected.append((f"{gold_url}:{number}", f"expected 'src_id<TAB>tgt_id', got {len(fields)} fields"))
        elif fields[0] not in known_src or fields[1] not in known_tgt:
            split.rejected.append((f"{gold_url}:{number}", f"gold pair {tuple(fields)} names an id absent from the split"))
        else:
            split.gold.add((fields[0], fields[1]))
    return split
