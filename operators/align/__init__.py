"""Word alignment: fast_align learning and directional decoding, symmetrization, word pairs."""
