"""Typed training config for the DeepSpeed-on-Ray-Train engine (validated at load)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from interlingua.core.config import Config

#: ZeRO stages that support gradient caching. Caching calls backward once per chunk before one
#: optimizer step; ZeRO 2/3 reduce-scatter and partition gradients inside every backward (the
#: "gradient computed twice" failure other projects hit), so the combination is refused.
GRAD_CACHE_ZERO_STAGES = (0, 1)


class TrainConfig(Config):
    objective: Literal["translation_ranking", "simcse_unsup", "simcse_sup", "amr_retrofit", "ease"] = Field(
        "translation_ranking", description="contrastive objective (see trainers/objectives)")
    temperature: float = Field(0.05, gt=0, description="softmax temperature τ (EASE: of both terms, τ_e and τ_s)")
    entity_vectors: str | None = Field(
        None, description="EASE: entity vectors initialising the entity table (path or fsspec URL): word2vec text, "
                          "a .npy matrix (with entity_vector_ids), or the ease-corpus '<name>-entities' parquet "
                          "(a .parquet file or a folder of them; columns entity_id, vector)")
    entity_vector_ids: str | None = Field(None, description="EASE: ids file (one per line) of a .npy entity_vectors")
    # Same default as EASELoss(simcse_weight=...) (tests/trainers/test_engine_ease.py checks they agree).
    ease_lambda: float = Field(1.0, ge=0, description="EASE: λ, the weight of the SimCSE term")
    ease_entity_weight: float = Field(1.0, ge=0, description="EASE: weight of the entity term (the authors' "
                                                               "released scripts use 0.01)")
    symmetric: bool = Field(True, description="rank in both directions (translation ranking)")
    num_workers: int = Field(2, ge=1, description="Ray Train workers (data-parallel ranks)")
    cpus_per_worker: int = Field(1, ge=1, description="CPU threads per worker")
    use_gpu: bool | None = Field(None, description="None: use GPUs when the cluster has them")
    zero_stage: int = Field(0, ge=0, le=3, description="DeepSpeed ZeRO stage")
    batch_size: int = Field(16, ge=2, description="pairs per worker per step (global batch = this x workers)")
    grad_cache_chunk: int | None = Field(None, ge=1, description="GradCache chunk size; None: no caching")
    max_steps: int = Field(20, ge=1, description="optimizer steps")
    lr: float = Field(2e-5, gt=0)
    weight_decay: float = Field(0.01, ge=0)
    warmup_steps: int = Field(0, ge=0)
    gradient_clipping: float = Field(1.0, ge=0, description="0 disables clipping")
    max_length: int = Field(64, ge=4, description="tokens per sentence")
    freeze_embeddings: bool = Field(False, description="freeze the word-embedding matrix")
    checkpoint_every: int = Field(0, ge=0, description="steps between checkpoints; 0: only at the end")
    seed: int = 42
    shuffle_buffer: int = Field(1024, ge=0, description="local shuffle buffer rows; 0: no shuffle")
    shm_comm: bool = Field(False, description="compile DeepSpeed's CPU shared-memory all-reduce (slow first build)")

    @model_validator(mode="after")
    def _check_combinations(self) -> "TrainConfig":
        if self.objective == "ease" and not self.entity_vectors:
            raise ValueError("objective 'ease' requires entity_vectors: the path or URL of the entity vectors "
                             "(word2vec text, .npy with entity_vector_ids, or the ease-corpus entities parquet)")
        if self.objective == "ease" and str(self.entity_vectors).endswith(".npy") and not self.entity_vector_ids:
            raise ValueError(f"entity_vectors={self.entity_vectors!r} is a .npy matrix: set entity_vector_ids "
                             f"(its ids, one per line, in row order)")
        if self.grad_cache_chunk is not None and self.zero_stage not in GRAD_CACHE_ZERO_STAGES:
            raise ValueError(
                f"grad_cache_chunk={self.grad_cache_chunk} with zero_stage={self.zero_stage} is not supported: "
                f"gradient caching runs several backward passes per step, which ZeRO 2/3 gradient partitioning "
                f"does not allow; use zero_stage 0 or 1, or set grad_cache_chunk to null")
        if self.grad_cache_chunk is not None and self.grad_cache_chunk > self.batch_size:
            raise ValueError(f"grad_cache_chunk={self.grad_cache_chunk} must be <= batch_size={self.batch_size}")
        return self
