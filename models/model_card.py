"""What a registered encoder records about itself: the model card.

Every workflow that registers an encoder fills one :class:`ModelCard`; the registry writes it as the
model folder's ``README.md`` (the card users read in MLflow and in a sentence-transformers folder), as
the registered version's description, and as ``interlingua.*`` tags.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class ModelCard:
    """Provenance and results of one trained encoder.

    Args:
        base_model: the encoder training started from (URI or path as the user gave it).
        objective: the training objective (``translation_ranking``, ``ease``, ``meaning_head``, ...).
        workflow: the workflow that produced it (``quickstart``, ``train``, ``recipe:NAME/STAGE``, ...).
        corpus_versions: corpus name -> version id of every corpus seen in training.
        languages: the languages seen in training (ISO codes).
        config: the resolved workflow config (credentials are masked on construction, as in ``base_model``).
        evaluation: rows ``{"task": ..., "metric": ..., "base": ..., "tuned": ...}`` (any extra keys allowed).
        description: one paragraph for humans (credentials masked too).
    """

    base_model: str
    objective: str
    workflow: str
    corpus_versions: dict[str, str] = field(default_factory=dict)
    languages: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    evaluation: list[dict[str, Any]] = field(default_factory=list)
    description: str = ""

    def __post_init__(self) -> None:
        from interlingua.core.redact import redact, redact_text

        self.base_model = redact_text(self.base_model)
        self.description = redact_text(self.description)
        self.config = redact(dict(self.config))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def tags(self) -> dict[str, str]:
        """Flat string tags for the MLflow model version."""
        return {
            "interlingua.base_model": self.base_model,
            "interlingua.objective": self.objective,
            "interlingua.workflow": self.workflow,
            "interlingua.corpus_versions": ",".join(f"{k}@{v}" for k, v in sorted(self.corpus_versions.items())),
            "interlingua.languages": ",".join(self.languages),
        }

    def to_markdown(self) -> str:
        lines = [f"# {self.workflow}: {self.objective} over {self.base_model}", ""]
        if self.description:
            lines += [self.description, ""]
        lines += ["| | |", "|---|---|", f"| base model | `{self.base_model}` |", f"| objective | `{self.objective}` |",
                  f"| workflow | `{self.workflow}` |",
                  f"| corpus versions | {', '.join(f'`{k}@{v}`' for k, v in sorted(self.corpus_versions.items())) or '-'} |",
                  f"| languages | {', '.join(self.languages) or '-'} |", ""]
        if self.evaluation:
            keys = list(dict.fromkeys(k for row in self.evaluation for k in row))
            lines += ["## Evaluation", "", "| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
            lines += ["| " + " | ".join(_cell(row.get(k)) for k in keys) + " |" for row in self.evaluation]
            lines.append("")
        if self.config:
            import json

            lines += ["## Config", "", "```json", json.dumps(self.config, indent=2, sort_keys=True, default=str), "```", ""]
        return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return "" if value is None else str(value)
