"""Evaluation tasks: given an encoder and a seed, embed a task's texts and compute its metrics."""
