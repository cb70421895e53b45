"""Encoders evaluated by the suite, all behind ``TextEncoder.encode(texts) -> np.ndarray``."""
