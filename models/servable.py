"""The rule a registered ``sentence_transformers`` version must meet before interlingua evaluates or promotes it:
what ``mlflow.pyfunc.load_model`` of it runs is MLflow's own sentence-transformers loader over the folder interlingua
reads, never a pickle.

A registry may be shared, and a version's ``MLmodel`` and files can be rewritten after it was registered: a
``python_function`` flavor pointing at ``mlflow.pyfunc.model`` with a cloudpickled ``python_model`` beside the
untouched sentence-transformers folder would be evaluated by interlingua (which reads the folder) and served by
MLflow (which unpickles). :func:`check_servable` refuses such a version in one line naming it and the key or file.
Used by ``interlingua promote`` (from the registry's listing, before any model loads) and by
:func:`interlingua.models.load.encoder_folder_of_mlflow_model` (from the local files) for every MLflow model that
declares the ``sentence_transformers`` flavor.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from typing import Any

from interlingua.core.errors import UserError

#: The only ``python_function.loader_module`` a servable version may name.
SERVING_LOADER = "mlflow.sentence_transformers"
#: File suffixes of pickles and of pickle-based formats (``torch.save``'s ``.pt``/``.pth``/``.bin``/``.ckpt``).
PICKLE_SUFFIXES = (".pkl", ".pickle", ".pck", ".pcl", ".cloudpickle", ".joblib", ".dill", ".pt", ".pth", ".bin",
                   ".ckpt")
#: ``MLmodel`` flavor keys that name a pickle (``python_model``, ``pickled_model``, ``cloudpickle_version``, ...).
_PICKLE_KEY = re.compile(r"(?i)pickle|pkl|python_model|dill|joblib")
_PICKLE_FORMATS = frozenset({"pickle", "cloudpickle", "dill", "joblib"})
_HINT = ("hint: register the encoder folder again with interlingua.models.registry.log_and_register_encoder and "
         "use that version")


def check_servable(mlmodel: dict, files: Iterable[str], label: str) -> None:
    """A :class:`UserError` naming ``label`` and the offending key or file when the MLflow model (``mlmodel``: its
    ``MLmodel`` as read; ``files``: its files, relative paths) would not be served by MLflow's sentence-transformers
    loader alone: a ``python_function.loader_module`` other than :data:`SERVING_LOADER`, a pickle-ish key or value
    or a ``code`` path in a flavor, or a file with a pickle suffix."""
    flavors = mlmodel.get("flavors")
    if not isinstance(flavors, dict):
        raise UserError(f"{label}: its MLmodel's flavors are a {type(flavors).__name__}, not a mapping; {_HINT}")
    if "python_function" in flavors:
        pyfunc = flavors["python_function"]
        loader = pyfunc.get("loader_module") if isinstance(pyfunc, dict) else None
        if loader != SERVING_LOADER:
            raise UserError(f"{label}: its MLmodel's flavors.python_function.loader_module is {loader!r}, not "
                            f"{SERVING_LOADER!r}: mlflow.pyfunc.load_model would run that loader, not the "
                            f"sentence-transformers folder interlingua reads; {_HINT}")
    for key, value in _leaves(flavors, "flavors"):
        name = key.rsplit(".", 1)[-1]
        if _PICKLE_KEY.search(name) or (isinstance(value, str) and value.strip().lower() in _PICKLE_FORMATS):
            raise UserError(f"{label}: its MLmodel holds {key} (a pickle, which mlflow.pyfunc.load_model would "
                            f"unpickle); {_HINT}")
        if name in ("code", "code_paths") and value not in (None, "", [], {}):
            raise UserError(f"{label}: its MLmodel holds {key} (code MLflow imports when it loads the model); {_HINT}")
    for path in files:
        if str(path).lower().endswith(PICKLE_SUFFIXES):
            raise UserError(f"{label} holds {path}, a pickle-based file (a registered encoder holds safetensors "
                            f"weights only); {_HINT}")


def local_files(folder: str | os.PathLike) -> Iterator[str]:
    """The relative paths (``/``-separated) of everything but folders under ``folder``; a link is listed, not
    entered."""
    for root, dirs, names in os.walk(folder):
        for name in [*names, *(d for d in dirs if os.path.islink(os.path.join(root, d)))]:
            yield os.path.relpath(os.path.join(root, name), folder).replace(os.sep, "/")


def _leaves(value: Any, key: str) -> Iterator[tuple[str, Any]]:
    """(dotted key, value) for every entry of the mappings and lists nested in ``value`` (containers too)."""
    if isinstance(value, dict):
        entries = ((f"{key}.{name}", inner) for name, inner in value.items())
    elif isinstance(value, list):
        entries = ((f"{key}[{i}]", inner) for i, inner in enumerate(value))
    else:
        return
    for dotted, inner in entries:
        yield dotted, inner
        yield from _leaves(inner, dotted)
