"""Two small charts of the frozen-encoder workflows (matplotlib Agg, PNG):

* :func:`write_pca_panels`: one 2-D PCA scatter per embedding kind, points coloured by language (as in
  Tiyajamorn et al. 2021, Figure 5: raw vs meaning vs language embeddings);
* :func:`write_metric_curves`: a metric (mean ± std error bars) against an x value, one line per method
  (ABSent: P@1 against the parallel ratio).
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def pca_2d(vectors: np.ndarray) -> np.ndarray:
    """First two principal components of the rows of ``vectors`` (centered, via SVD)."""
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2 or len(x) < 2:
        raise ValueError(f"PCA needs at least 2 rows of a 2-D array; got shape {x.shape}")
    x = x - x.mean(axis=0)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    return x @ vt[:2].T


def write_pca_panels(panels: Mapping[str, np.ndarray], labels: Sequence[str], path: str | Path, title: str = "") -> Path:
    """``panels``: name -> (n, d) vectors of the same n items; ``labels``: the language of each item."""
    plt = _pyplot()
    labels = np.asarray(labels)
    fig, axes = plt.subplots(1, len(panels), figsize=(4.0 * len(panels), 3.8), squeeze=False)
    for ax, (name, vectors) in zip(axes[0], panels.items()):
        if len(vectors) != len(labels):
            raise ValueError(f"panel {name!r} has {len(vectors)} rows for {len(labels)} labels")
        points = pca_2d(vectors)
        for label in sorted(set(labels.tolist())):
            mask = labels == label
            ax.scatter(points[mask, 0], points[mask, 1], s=6, alpha=0.6, label=label)
        ax.set_title(name, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    axes[0][0].legend(fontsize=7, markerscale=2)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return _save(fig, plt, path)


def write_metric_curves(curves: Mapping[str, Mapping[float, tuple[float, float]]], path: str | Path, *,
                        xlabel: str, ylabel: str, title: str = "") -> Path:
    """``curves``: method -> {x: (mean, std)}; one line with error bars per method."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for method, points in curves.items():
        xs = sorted(points)
        ax.errorbar(xs, [points[x][0] for x in xs], yerr=[points[x][1] for x in xs], marker="o", capsize=3, label=method)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return _save(fig, plt, path)


def _save(fig, plt, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
