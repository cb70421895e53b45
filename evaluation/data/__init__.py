"""Loaders for the official evaluation file formats (local or fsspec paths, HF datasets ids)."""
