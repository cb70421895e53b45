"""Log a trained encoder to MLflow as a model, register it and point an alias at the new version.

The model is an MLflow ``pyfunc`` whose artifact is the encoder folder (sentence-transformers
layout); ``predict`` on a list/Series/DataFrame of texts returns the embeddings. ``load_encoder``
reads ``models:/NAME@ALIAS`` back into a :class:`SentenceEncoder`.
"""

from __future__ import annotations

from dataclasses import dataclass

import mlflow
import mlflow.pyfunc
from mlflow.tracking import MlflowClient

from interlingua.models.model_card import ModelCard

ENCODER_ARTIFACT = "encoder"


class EncoderPyfunc(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from interlingua.models.load import load_encoder_folder

        self.encoder = load_encoder_folder(context.artifacts[ENCODER_ARTIFACT])

    def predict(self, context, model_input: list[str], params=None):
        return self.encoder.encode([str(t) for t in model_input])


@dataclass(frozen=True)
class RegisteredEncoder:
    name: str
    version: str
    alias: str

    @property
    def uri(self) -> str:
        return f"models:/{self.name}@{self.alias}"

    @property
    def pinned_uri(self) -> str:
        """The immutable URI of this version (the alias may move later)."""
        return f"models:/{self.name}/{self.version}"


def log_and_register_encoder(encoder_dir: str, name: str, alias: str, run_id: str, *,
                              card: ModelCard | None = None) -> RegisteredEncoder:
    """Log ``encoder_dir`` into run ``run_id``, register it as ``name`` and set ``alias`` to it. A ``card``
    is logged with the model (``model_card/README.md``, ``model_card/card.json``), becomes the version's
    description and its ``interlingua.*`` tags."""
    with mlflow.start_run(run_id=run_id):
        info = mlflow.pyfunc.log_model(
            name="model",
            python_model=EncoderPyfunc(),
            artifacts={ENCODER_ARTIFACT: encoder_dir},
            pip_requirements=["interlingua", "torch==2.13.0", "transformers==5.23.0"],
            registered_model_name=name,
        )
        if card is not None:
            mlflow.log_text(card.to_markdown(), "model_card/README.md")
            mlflow.log_dict(card.to_dict(), "model_card/card.json")
    version = str(info.registered_model_version)
    client = MlflowClient()
    if card is not None:
        for key, value in card.tags().items():
            client.set_model_version_tag(name, version, key, value)
        client.update_model_version(name, version, description=card.to_markdown())
    client.set_registered_model_alias(name, alias, version)
    return RegisteredEncoder(name, version, alias)
