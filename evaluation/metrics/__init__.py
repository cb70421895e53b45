"""Evaluation metrics as pure functions over numpy arrays, one module per protocol."""
