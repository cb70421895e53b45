"""Log a trained encoder to MLflow as a model, register it and point an alias at the new version.

The model is logged with MLflow's standard ``sentence_transformers`` flavor: the artifact is the
encoder's sentence-transformers folder (``model.sentence_transformer/``: safetensors weights, tokenizer,
``modules.json`` and whatever modules the folder stacks — pooling, a Dense head, Normalize), with no
pickled project code. A plain transformer + pooling folder gets a ``Normalize`` module appended, so the
served vectors equal ``SentenceEncoder.encode``'s (unit length); longer stacks are logged as they are. Anything that has MLflow and sentence-transformers loads and serves it
(``mlflow.sentence_transformers.load_model``, ``mlflow.pyfunc.load_model``, ``mlflow models serve``);
``interlingua`` is not a requirement of the model. :func:`~interlingua.models.load.load_encoder` reads
``models:/NAME@ALIAS`` back without MLflow's loader.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from interlingua.core import tracking
from interlingua.core.errors import UserError
from interlingua.models.load import extra_modules
from interlingua.models.model_card import ModelCard

#: The folder the flavor writes the sentence-transformers model into, inside the MLflow model.
FLAVOR_DATA_DIR = "model.sentence_transformer"
#: Artifact name of the model inside the MLflow model (``name=`` of ``log_model``).
MODEL_NAME = "model"
#: Packages the served model needs, pinned to the versions installed here.
SERVING_PACKAGES = ("sentence-transformers", "transformers", "torch")


@dataclass(frozen=True)
class RegisteredEncoder:
    name: str
    version: str
    alias: str

    @property
    def uri(self) -> str:
        return f"models:/{self.name}@{self.alias}"

    @property
    def version_uri(self) -> str:
        return f"models:/{self.name}/{self.version}"


def pinned_requirements() -> list[str]:
    """``package==version`` for :data:`SERVING_PACKAGES` as installed (local tags such as ``+cpu``
    dropped, so an index resolves them)."""
    return [f"{name}=={metadata.version(name).split('+')[0]}" for name in SERVING_PACKAGES]


def embedding_signature(dim: int):
    """Input: one string column (the texts); output: float32 embeddings ``(-1, dim)``."""
    import numpy as np
    from mlflow.models import ModelSignature
    from mlflow.types import ColSpec, Schema, TensorSpec

    return ModelSignature(inputs=Schema([ColSpec("string")]), outputs=Schema([TensorSpec(np.dtype("float32"), (-1, dim))]))


def load_sentence_transformer(encoder_dir: str | Path):
    """``SentenceTransformer`` of any sentence-transformers folder (Transformer + Pooling, with or without a
    Dense head or Normalize; ours or not), offline and without remote code."""
    folder = Path(encoder_dir)
    if not (folder / "modules.json").is_file():
        raise UserError(f"{folder} is not a sentence-transformers folder (no modules.json); "
                        "save encoders with SentenceEncoder.save or SentenceTransformer.save")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(folder), device="cpu", local_files_only=True, trust_remote_code=False)


def log_and_register_encoder(encoder_dir: str, name: str, alias: str, run_id: str, *,
                             card: ModelCard | None = None, tags: dict[str, str] | None = None) -> RegisteredEncoder:
    """Log the sentence-transformers folder ``encoder_dir`` into run ``run_id`` with the
    ``sentence_transformers`` flavor, register it as ``name``, set ``alias`` to the new version.

    ``card`` becomes the model folder's ``README.md``, the run's ``model_card/README.md`` and
    ``model_card/card.json``, the version's description and its ``interlingua.*`` tags; ``tags`` are added to
    the version as they are."""
    import mlflow
    import mlflow.sentence_transformers
    from mlflow.tracking import MlflowClient

    model = load_sentence_transformer(encoder_dir)
    if not extra_modules(encoder_dir) and not _ends_normalized(model):
        from sentence_transformers.sentence_transformer.modules import Normalize

        model.append(Normalize())  # served vectors = SentenceEncoder.encode's (unit length)
    readme = tracking.masked(card.to_markdown() if card else _default_readme(encoder_dir, name))
    model._model_card_text = readme  # sentence-transformers writes this text as README.md on save
    dim = int(model.get_embedding_dimension())
    with mlflow.start_run(run_id=run_id):
        info = mlflow.sentence_transformers.log_model(
            model,
            name=MODEL_NAME,
            signature=embedding_signature(dim),
            pip_requirements=pinned_requirements(),
            registered_model_name=name,
            metadata={"interlingua.embedding_dim": dim},
        )
        if card is not None:
            tracking.log_text(readme, "model_card/README.md")
            tracking.log_dict(card.to_dict(), "model_card/card.json")
    version = str(info.registered_model_version)
    client = MlflowClient()
    tracking.describe_model_version(name, version, readme, client)
    tracking.set_model_version_tags(name, version, {**(card.tags() if card else {}), **(tags or {}),
                                                    "interlingua.embedding_dim": str(dim)}, client)
    client.set_registered_model_alias(name, alias, version)
    return RegisteredEncoder(name, version, alias)


def _ends_normalized(model) -> bool:
    return type(model[len(model) - 1]).__name__ == "Normalize"


def _default_readme(encoder_dir: str, name: str) -> str:
    modules = json.loads((Path(encoder_dir) / "modules.json").read_text())
    stack = " → ".join(m["type"].rsplit(".", 1)[-1] for m in modules)
    return f"# {name}\n\nA sentence-transformers encoder ({stack}) registered by interlingua without a model card.\n"
