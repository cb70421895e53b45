"""Evaluation of sentence encoders with the field's protocols.

- ``metrics/``: pure functions over numpy arrays (STS, Tatoeba retrieval, BUCC margin mining, clustering,
  zero-shot transfer, QE, alignment/uniformity, mean ± std over seeds).
- ``data/``: loaders for the official file formats (STS2017, Tatoeba, BUCC 2018, MewsC-16, MLDoc, XNLI,
  PAWS-X, MARC, QAM, WMT20 QE) from local/fsspec paths or HF datasets.
- ``encoders/``: the ``TextEncoder`` protocol, frozen baselines (USE, MiniLM, averaged word vectors), the
  product's trained encoders, combinations of two encoders and an on-disk embedding cache.
- ``pack/``: the offline benchmark pack built from real data (Bible, debian-reference, Wikipedia leads).
- ``tasks/``, ``runner.py``, ``report/``: running tasks over seeds and reporting (table, JSON, PNG, MLflow).
- ``splits.py``: deterministic held-out splits shared with training.
"""
