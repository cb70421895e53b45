"""Models layer: the one encoder concept (protocol, transformer encoder, USE, word vectors,
combinations, caches), loading/saving and the MLflow registry."""
