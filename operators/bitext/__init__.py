"""Bitext operators: reading parallel text files with rejects, hygiene filters (sample, dedup, ratio)."""
