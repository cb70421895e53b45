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

ENCODER_ARTIFACT = "encoder"


class EncoderPyfunc(mlflow.pyfunc.PythonModel):
    def load_context(self, context):
        from interlingua.models.sentence_encoder import SentenceEncoder

        self.encoder = SentenceEncoder.from_folder(context.artifacts[ENCODER_ARTIFACT])

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


def log_and_register_encoder(encoder_dir: str, name: str, alias: str, run_id: str) -> RegisteredEncoder:
    """Log ``encoder_dir`` into run ``run_id``, register it as ``name`` and set ``alias`` to it."""
    with mlflow.start_run(run_id=run_id):
        info = mlflow.pyfunc.log_model(
            name="model",
            python_model=EncoderPyfunc(),
            artifacts={ENCODER_ARTIFACT: encoder_dir},
            pip_requirements=["interlingua", "torch==2.13.0", "transformers==5.23.0"],
            registered_model_name=name,
        )
    version = str(info.registered_model_version)
    MlflowClient().set_registered_model_alias(name, alias, version)
    return RegisteredEncoder(name, version, alias)
