"""Typed training config for the DeepSpeed-on-Ray-Train engine (validated at load).

Engine keys are fields here; each objective's own keys live in its typed options
(``interlingua.trainers.objectives.registry``): ``options.<objective>.<key>``, or simply ``<key>`` at this level
for the chosen objective (``temperature``, ``ease_lambda``, ``entity_vectors``, ``align_layer``, ...), which keeps
configs written before options existed working. Only the chosen objective's options are kept after validation.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator

from interlingua.core.config import Config, closest, unknown_key_hint

#: ZeRO stages that support gradient caching. Caching calls backward once per chunk before one
#: optimizer step; ZeRO 2/3 reduce-scatter and partition gradients inside every backward (the
#: "gradient computed twice" failure other projects hit), so the combination is refused.
GRAD_CACHE_ZERO_STAGES = (0, 1)


class TrainConfig(Config):
    ABSENT_KEYS: ClassVar[dict[str, str]] = {
        "gradient_accumulation_steps": "gradient accumulation adds no in-batch negatives (each micro-batch's loss sees "
                                       "only its own rows): for a larger batch in the same memory set grad_cache_chunk "
                                       "(gradient caching: the whole batch's negatives, encoded chunk by chunk)",
        "epochs": "training length is max_steps (the data repeats, reshuffled each pass)",
        "num_epochs": "training length is max_steps (the data repeats, reshuffled each pass)",
    }
    objective: str = Field("translation_ranking", description="training objective (see --list-keys: options.<objective>.*)")
    options: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="per objective: its options; the chosen objective's may also be set "
                                          "at the top level (e.g. temperature)")
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
    max_length: int = Field(64, ge=4, description="training length: tokens per sentence while training")
    save_max_length: int | None = Field(
        None, ge=4, description="the saved model's max_seq_length (inference); None: keep the base model's")
    freeze_embeddings: bool = Field(False, description="freeze the word-embedding matrix")
    checkpoint_every: int = Field(0, ge=0, description="steps between checkpoints; 0: only at the end")
    keep_checkpoints: int = Field(2, ge=1, description="Ray Train checkpoints kept per run (the most recent ones)")
    seed: int = 42
    shuffle_buffer: int = Field(1024, ge=0, description="local shuffle buffer rows; 0: no shuffle")
    prefetch_batches: int = Field(1, ge=0, description="batches tokenized into views in a background thread ahead "
                                  "of the step (the GPU need not wait for the tokenizer); 0: inline")
    compile_encoder: bool = Field(False, description="compile the encoder's layers with torch.compile, one layer at a "
                                  "time (GPU: fused kernels, fewer launches; the first steps pay the compilation)")
    shm_comm: bool = Field(False, description="compile DeepSpeed's CPU shared-memory all-reduce (slow first build)")

    @model_validator(mode="before")
    @classmethod
    def _objective_options(cls, data: Any, info: ValidationInfo) -> Any:
        """Move the chosen objective's top-level keys into ``options[objective]``, validate its options with
        the objective's class, and keep only that section. Another objective's options, which the run would ignore,
        are refused (an empty section is nothing given); the workflow's defaults for the objective a user replaces
        never reach here (:meth:`section_base`), nor do the replaced objective's when ``objective`` is assigned."""
        if not isinstance(data, dict):
            return data
        from interlingua.trainers.objectives.registry import objective_class, objective_names

        data = dict(data)
        name = data.get("objective", cls.model_fields["objective"].default)
        try:
            chosen = objective_class(name)
        except (ValueError, TypeError):  # TypeError: a list or mapping as the objective
            return data  # the objective field's validator reports it
        options = data.get("options") or {}
        if not isinstance(options, dict):
            raise ValueError(f"options must map objective names to their options (e.g. options.{name}.<key>); "
                             f"got {type(options).__name__} {options!r}")
        sections = dict(options)
        if info.field_name == "objective":  # assigned: the options held are the replaced objective's, not a choice
            sections = {key: value for key, value in sections.items() if key == name}
        bad = {key: value for key, value in sections.items() if value is not None and not isinstance(value, dict)}
        if bad:
            key, value = next(iter(bad.items()))
            raise ValueError(f"options.{key} must map option names to values; got {type(value).__name__} {value!r}")
        section = dict(sections.get(name) or {})
        for key in [k for k in data if k not in cls.model_fields]:
            if key in chosen.Options.model_fields:
                value = data.pop(key)
                _one_value(key, value, section, name)  # one mapping gives both spellings (a recipe stage)
                section[key] = value
            else:
                owners = [n for n in objective_names() if key in objective_class(n).Options.model_fields]
                if owners:
                    raise ValueError(f"{key!r} is an option of objective {' / '.join(map(repr, owners))}, "
                                     f"not of {name!r}")
                close = closest(key, [*cls.model_fields, *chosen.Options.model_fields], cutoff=0.5)
                if close and close not in cls.model_fields:  # a misspelt option of the chosen objective
                    raise ValueError(f"{key}: unknown key; did you mean {close}? (an option of objective "
                                     f"{name!r}; see --list-keys)")
        sections[name] = section
        for other, values in sections.items():
            options_cls = objective_class(other).Options
            if other != name and values:
                raise ValueError(_inactive_options(other, values, name))
            try:
                validated = options_cls.model_validate(values or {})
            except ValidationError as err:
                raise ValueError(_options_error(other, options_cls, err, other == name)) from None
            if other == name:
                data["options"] = {name: validated.model_dump()}
        return data

    @classmethod
    def normalize_layer(cls, given: dict[str, Any], base: dict[str, Any], *, one_mapping: bool = False,
                        final: dict[str, Any] | None = None) -> dict[str, Any]:
        """The chosen objective's options given at the top level (``temperature``) moved to ``options.<objective>``,
        over what the layer had there: a layer holds one value per option, and the later layer wins. The objective is
        the one all layers choose (``final``), so a file's ``temperature`` goes to the objective a later ``--set``
        picks (an option it lacks stays at the top level, where validation names its owner). In one mapping as
        written (``one_mapping``: a file) both spellings with two values are refused, as a recipe stage's are."""
        from interlingua.trainers.objectives.registry import objective_class

        given = _without_replaced_choice(given, final)
        name = (final or {}).get("objective", given.get("objective", base.get("objective",
                                                                              cls.model_fields["objective"].default)))
        try:
            fields = objective_class(name).Options.model_fields
        except (ValueError, TypeError):
            return given  # the objective's validator reports it
        short = [key for key in given if key not in cls.model_fields and key in fields]
        options = given.get("options", {})
        if not short or not isinstance(options, dict) or not isinstance(options.get(name, {}), dict):
            return given  # nothing to move, or options that are not mappings: the validator says so
        nested = options.get(name) or {}
        if one_mapping:
            for key in short:
                _one_value(key, given[key], nested, name)
        moved = {key: value for key, value in given.items() if key not in short}
        moved["options"] = {**options, name: {**nested, **{key: given[key] for key in short}}}
        return moved

    @classmethod
    def section_base(cls, base: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
        """The workflow's default options of the chosen objective, less those the user gives by their short spelling
        (``temperature`` for ``options.<objective>.temperature``): what remains under ``options`` then is the
        user's, and a short and a long spelling given with two values are refused, not decided by spelling. The
        default options of an objective the user replaced (``objective: ease`` over a translation_ranking default)
        are dropped: they are no one's choice, and options of an objective not chosen are refused."""
        from interlingua.trainers.objectives.registry import objective_class

        name = given.get("objective", base.get("objective"))
        try:
            fields = objective_class(name).Options.model_fields
        except (ValueError, TypeError):
            return base  # the objective's validator reports it
        short = {key for key in given if key not in cls.model_fields and key in fields}
        options = base.get("options")
        if not isinstance(options, dict):
            return base
        own = options.get(name)
        if not isinstance(own, dict):
            return {**base, "options": {}}
        return {**base, "options": {name: {k: v for k, v in own.items() if k not in short}}}

    @field_validator("objective")
    @classmethod
    def _known_objective(cls, name: str) -> str:
        from interlingua.trainers.objectives.registry import objective_class

        objective_class(name)  # ValueError naming the choices
        return name

    @model_validator(mode="after")
    def _check_combinations(self) -> "TrainConfig":
        if self.grad_cache_chunk is not None and self.zero_stage not in GRAD_CACHE_ZERO_STAGES:
            raise ValueError(
                f"grad_cache_chunk={self.grad_cache_chunk} with zero_stage={self.zero_stage} is not supported: "
                f"gradient caching runs several backward passes per step, which ZeRO 2/3 gradient partitioning "
                f"does not allow; use zero_stage 0 or 1, or set grad_cache_chunk to null")
        if self.grad_cache_chunk is not None and self.grad_cache_chunk > self.batch_size:
            raise ValueError(f"grad_cache_chunk={self.grad_cache_chunk} must be <= batch_size={self.batch_size}")
        if self.warmup_steps > self.max_steps:
            raise ValueError(f"warmup_steps={self.warmup_steps} must be <= max_steps={self.max_steps}: "
                             f"the learning rate would never finish warming up")
        if self.zero_stage == 3 and not self.objective_class.supports_zero3:
            raise ValueError(f"objective {self.objective!r} uses parameters outside the engine's forward pass, "
                             f"which ZeRO 3 partitions: use zero_stage 0, 1 or 2")
        return self

    @property
    def objective_class(self) -> type:
        from interlingua.trainers.objectives.registry import objective_class

        return objective_class(self.objective)

    @property
    def objective_options(self):
        """The chosen objective's typed options."""
        return self.objective_class.Options.model_validate(self.options.get(self.objective, {}))

    def __getattr__(self, name: str) -> Any:
        # Configs written before per-objective options read e.g. ``config.temperature``: the chosen objective's.
        try:
            return super().__getattr__(name)
        except AttributeError:
            section = self.__dict__.get("options", {}).get(self.__dict__.get("objective"), {})
            if name in section:
                return section[name]
            raise

    @classmethod
    def field_help(cls, name: str, prefix: str, default: Any) -> list[str] | None:
        """``--list-keys``: the objectives by name, and every objective's options (``options.<objective>.<key>``)."""
        from interlingua.trainers.objectives.registry import objective_class, objective_names

        if name == "objective":
            return [f"{prefix}objective (one of {', '.join(map(repr, objective_names()))}, default {default!r})  "
                    f"training objective; its options below may also be set as {prefix}<key>"]
        if name != "options":
            return None
        from interlingua.core.config import config_fields_help

        lines = []
        for objective in objective_names():
            lines.extend(config_fields_help(objective_class(objective).Options, f"{prefix}options.{objective}."))
        return lines


def _without_replaced_choice(given: dict[str, Any], final: dict[str, Any] | None) -> dict[str, Any]:
    """A layer that chose an objective a later layer replaces (a file's ``objective: simcse_unsup`` with its options,
    then ``--set train.objective=translation_ranking``), less its options of the objective it chose: they went with
    that choice, as the workflow's default options of a replaced objective do (:meth:`TrainConfig.section_base`).
    Options of an objective the layer did not choose itself stay, and are refused if it is not the final one."""
    own, options = given.get("objective"), given.get("options")
    if not own or own == (final or {}).get("objective", own) or not isinstance(options, dict) or own not in options:
        return given
    return {**given, "options": {key: value for key, value in options.items() if key != own}}


def _one_value(key: str, value: Any, nested: dict[str, Any], objective: str) -> None:
    """ValueError when ``options.<objective>.<key>`` (``nested``) holds another value than ``key`` at the top level."""
    if key in nested and nested[key] != value:
        raise ValueError(f"{key} is given twice: {key} = {value!r} and options.{objective}.{key} = {nested[key]!r}; "
                         "keep one (the two spellings are one option)")


def _inactive_options(objective: str, values: dict[str, Any], chosen: str) -> str:
    """Why ``options.<objective>`` (``values``) is refused while objective ``chosen`` trains: it would be ignored."""
    keys = ", ".join(f"options.{objective}.{key}" for key in values)
    return (f"{keys}: an option of objective {objective!r}, but the objective is {chosen!r}, so it would be ignored; "
            f"set this section's objective to {objective} too, or drop the key")


def _options_error(objective: str, options_cls: type, err: ValidationError, chosen: bool) -> str:
    problems = []
    for e in err.errors():
        key = ".".join(str(p) for p in e["loc"]) or "options"
        if e["type"] == "extra_forbidden":
            problems.append(f"{key}: unknown key{unknown_key_hint(options_cls, e['loc'])}")
        elif e["type"] == "missing":
            problems.append(f"{key} is required ({options_cls.model_fields[key].description})")
        else:
            problems.append(f"{key}: {e['msg']}")
    where = f"objective {objective!r}" if chosen else f"options.{objective} (objective {objective!r}, not chosen)"
    return f"{where}: " + "; ".join(problems)
