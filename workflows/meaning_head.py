"""Workflow ``meaning-head``: meaning/language disentanglement over a frozen encoder (Tiyajamorn et al. 2021).

1. **bitext**: a corpus version or file (default: Bible en-es minus the benchmark's held-out verses), a
   deterministic sample of ``bitext.max_pairs`` pairs; pairs with both sides in one language are refused.
2. **embed**: the frozen encoder's vectors of every training and evaluation text, computed once by the
   ``embed`` operator on Ray and cached (``<state>/embedding-cache``); pairs with a non-finite vector are
   rejected and counted; training never encodes text.
3. **train** per seed: MLP_M, MLP_L, MLP_I with L = L_R + L_M + L_L (batch 512, Adam 1e-4, early stopping
   with patience 15 on a 10 % validation split), plus one model per ``ablations`` entry (a term switched off).
4. **baselines**: raw embeddings, per-language mean centering, least-squares projection to English.
5. **evaluate** on the benchmark pack (held-out Bible verses, debian-reference retrieval and mining): a table
   of mean ± std over seeds; PNG charts (PCA of raw / meaning / language embeddings; the table as bars).
6. **register**: base encoder + meaning head (first seed) as a composed encoder folder, logged to the
   MLflow run and registered under ``registered_model@alias``; ``interlingua embed|eval`` and
   ``load_encoder`` read it back.
"""

from __future__ import annotations

import fnmatch
import json
import sys
import time
from pathlib import Path
from typing import Annotated, Literal, get_args

import numpy as np
from pydantic import AfterValidator, Field, model_validator

from interlingua.core.config import Config, no_repeats
from interlingua.core.errors import UserError
from interlingua.workflows.frozen_bitext import BitextSource, check_language_sizes, split_validation, validation_size
from interlingua.core.names import ExperimentName, Location, RegisteredModelName, RegistryAlias

DESCRIPTION = "meaning/language heads over a frozen encoder (Tiyajamorn et al. 2021) vs raw/centered/projected; register"
Term = Literal["reconstruction", "meaning_cross", "meaning_mono", "language_mono", "language_id"]
TERMS = get_args(Term)
ENGLISH = "en"


class MeaningTrainConfig(Config):
    batch_size: int = Field(512, ge=2)
    lr: float = Field(1e-4, gt=0)
    max_epochs: int = Field(300, ge=1)
    patience: int = Field(15, ge=1, description="epochs without a better validation loss before stopping")
    validation_fraction: float = Field(0.1, gt=0, lt=1)
    activation: Literal["identity", "tanh"] = Field("identity", description="head activation")
    distance: Literal["squared_l2", "mse", "cosine"] = Field("squared_l2", description="L_R distance (see README)")
    terms: list[Term] = Field(list(TERMS), description="loss terms on")


class MeaningHeadConfig(Config):
    model: Location | None = Field(None, description="frozen encoder spec: a folder, models:/NAME@ALIAS, use, minilm; "
                              "default: the e5-small asset")
    state_dir: str | None = None
    bitext: BitextSource = Field(default_factory=BitextSource)
    seeds: Annotated[list[int], AfterValidator(no_repeats)] = Field([1], min_length=1)
    ablations: Annotated[list[Term], AfterValidator(no_repeats)] = Field(
        [], description="loss terms to switch off one at a time (extra rows)")
    train: MeaningTrainConfig = Field(default_factory=MeaningTrainConfig)
    pack: str | None = Field(None, description="benchmark pack folder (default <state>/bench-pack, built when missing)")
    tasks: list[str] = Field(["bible_retrieval", "debian_retrieval_*", "debian_mining_*"], min_length=1,
                             description="pack tasks (names or wildcards; retrieval and mining)")
    embed_chunk: int = Field(4000, ge=1, description="texts per embedding call (one cache part each)")
    experiment: ExperimentName = "meaning-head"
    registered_model: RegisteredModelName = "interlingua-meaning-head"
    alias: RegistryAlias = "meaning-head"
    register_model: bool = Field(True, description="register the composed encoder (first seed) in MLflow")
    pca_sentences: int = Field(300, ge=10, description="held-out pairs drawn in the PCA picture")

    @model_validator(mode="after")
    def _ablations_of_terms_on(self) -> "MeaningHeadConfig":
        """Switching off a term that train.terms leaves off gives a row equal to the full head's, labelled as an
        ablation."""
        off = [term for term in self.ablations if term not in self.train.terms]
        if off:
            raise ValueError(f"ablations {off} name terms train.terms does not switch on ({', '.join(self.train.terms)}): "
                             "an ablation switches off a term that is on")
        return self

    @model_validator(mode="after")
    def _batch_fits_the_pairs(self) -> "MeaningHeadConfig":
        """No language can hold a batch when fewer pairs are left for training (``bitext.max_pairs`` less the
        validation split) than one batch: refused at load, not after every sentence was embedded."""
        if self.bitext.max_pairs is None:
            return self
        training = self.bitext.max_pairs - validation_size(self.bitext.max_pairs, self.train.validation_fraction)
        if self.train.batch_size > training:
            raise ValueError(f"train.batch_size {self.train.batch_size} is above the {training} pairs left for training "
                             f"(bitext.max_pairs {self.bitext.max_pairs} less the train.validation_fraction "
                             f"{self.train.validation_fraction:g} held out): no language would fill one batch; set "
                             f"train.batch_size to at most {training}, or raise bitext.max_pairs")
        return self


CONFIG = MeaningHeadConfig


def run(config: MeaningHeadConfig, *, address: str | None = None) -> dict:
    from interlingua.core.progress import Stages
    from interlingua.core.runtime import check_tracking_store, configure_mlflow, state_dir
    from interlingua.workflows.frozen_bitext import load_bitext

    stages = Stages("meaning-head")
    state = state_dir(config.state_dir)
    spec = config.model or _default_model(state)  # the user's mistakes (exit 2) before the server's answer (69)
    preflight(config)
    check_tracking_store(state)  # an MLflow server that does not answer: exit 69 before the bitext is embedded
    if config.register_model and not registrable(spec):
        print(f"  note: {_NOT_REGISTRABLE.format(spec=spec)}; the composed encoder will be logged as run artifacts "
              "(encoder/) instead", file=sys.stderr)
    with stages("bitext"):
        bitext = load_bitext(config.bitext, state)
        languages = bitext.languages
        print(f"  {len(bitext)} pairs from {bitext.origin} ({', '.join(languages)}); rejected {bitext.rejected or 0}")
        check_training_split(bitext.src_langs, bitext.tgt_langs, languages, config, bitext.origin)
        pack, tasks = _pack_tasks(config, state)
    with stages("embed"):
        from interlingua.workflows.frozen_embeddings import embed, finite_rows, frozen_encoder

        encoder = frozen_encoder(spec, state, address)
        eval_texts = _eval_texts(pack, tasks)
        vectors = embed(encoder, bitext.src + bitext.tgt + [t for ts in eval_texts.values() for t in ts],
                        chunk=config.embed_chunk, label=spec)
        src, tgt = vectors[:len(bitext)], vectors[len(bitext):2 * len(bitext)]
        finite = finite_rows(src, tgt)
        rejected_nan = int((~finite).sum())
        if rejected_nan:
            print(f"  rejected {rejected_nan} pairs with NaN/inf embeddings from {spec}", file=sys.stderr)
        if not finite.any():
            raise UserError(f"every embedding of {bitext.origin} by {spec} is NaN/inf")
        lookup = _EmbeddingLookup(encoder, config.embed_chunk)
    from interlingua.trainers.disentangle.train import PairEmbeddings

    lang_id = {lang: k for k, lang in enumerate(languages)}
    pairs = PairEmbeddings(src[finite], tgt[finite],
                           np.array([lang_id[x] for x, ok in zip(bitext.src_langs, finite) if ok]),
                           np.array([lang_id[x] for x, ok in zip(bitext.tgt_langs, finite) if ok]))
    check_training_split([languages[k] for k in pairs.src_lang], [languages[k] for k in pairs.tgt_lang], languages,
                         config, bitext.origin,
                         f" once the {rejected_nan} pairs with NaN/inf embeddings are left out" if rejected_nan else "")

    import mlflow

    from interlingua.core import tracking

    configure_mlflow(config.experiment, state)
    with mlflow.start_run(run_name=f"meaning-head-{time.strftime('%Y%m%d-%H%M%S')}") as active:
        run_id = active.info.run_id
        tracking.log_params({"model": spec, "bitext": bitext.origin, "pairs": len(pairs), **config.model_dump(mode="json")})
        tracking.set_tags({"interlingua.workflow": "meaning-head", "interlingua.base_model": spec})
        mlflow.log_metrics({"bitext.pairs": len(pairs), "bitext.rejected_nan": rejected_nan,
                            **{f"bitext.rejected_{k}": v for k, v in bitext.rejected.items()}})

    variants = {"meaning head": config.train.terms}
    for term in config.ablations:
        variants[f"meaning head −{term}"] = [t for t in config.train.terms if t != term]
    with stages("train"):
        heads, histories = _train_all(config, pairs, languages, variants)
        _log_histories(run_id, histories)
    with stages("evaluate"):
        methods = _baselines(pairs, languages)
        rows = _evaluate(config, pack, tasks, lookup, methods, heads)
        table = format_table(rows, [t["name"] for t in tasks])
        print(table)
        out = state / "meaning-head" / run_id[:8]
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.txt").write_text(table + "\n", encoding="utf-8")
        (out / "results.json").write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        charts = [_pca_chart(config, pack, lookup, heads["meaning head"][0], out / "pca.png"),
                  _table_chart(rows, out / "results.png")]
        with mlflow.start_run(run_id=run_id):
            mlflow.log_metrics(table_metrics(rows))
            for path in [out / "results.txt", out / "results.json", *charts]:
                mlflow.log_artifact(str(path), artifact_path="evaluation")
    summary = {"run_id": run_id, "base_model": spec, "pairs": len(pairs), "results": str(out / "results.json"),
               "epochs": {name: [len(h) for h in hs.values()] for name, hs in histories.items()}}
    if config.register_model:
        with stages("register"):
            # model: the trained encoder pinned (a registered version, or the run's artifacts for a spec base), as
            # every workflow's `model` output is; model_uri: the alias (or the same runs:/ URI)
            by_alias, pinned = publish_encoder(spec, heads["meaning head"][0], out / "encoder", config, run_id,
                                               bitext, rows)
            summary["model_uri"] = by_alias
            summary["model"] = pinned
    print(f"meaning-head: done in {sum(stages.seconds.values()):.0f} s; table in {out / 'results.txt'}")
    return summary


# ----------------------------------------------------------------------------------------------- helpers


def _default_model(state: Path) -> str:
    from interlingua.workflows.assets.build import e5_model_dir

    folder = e5_model_dir(state / "assets")
    if not (folder / "config.json").is_file():
        raise UserError(f"no model given and the e5-small asset {folder} is missing; run `interlingua assets e5-small` "
                        "or set model=...")
    return str(folder)


def preflight(config: MeaningHeadConfig) -> None:
    """The settings' own mistakes: loss terms that leave the meaning head untrained, alone or in an ablation."""
    if not {"meaning_cross", "meaning_mono"} & set(config.train.terms):
        raise UserError("train.terms must keep meaning_cross or meaning_mono: without L_M nothing trains the meaning head")
    for term in config.ablations:
        if not {"meaning_cross", "meaning_mono"} & (set(config.train.terms) - {term}):
            raise UserError(f"ablation {term!r} leaves no meaning term on; drop it from ablations")


def check_training_split(src_langs: list[str], tgt_langs: list[str], languages: list[str], config: MeaningHeadConfig,
                         origin: str, when: str = "") -> None:
    """Every language fills a batch with the sentences of the training split :func:`_train_all` will draw from the
    pairs (languages ``src_langs[i]``, ``tgt_langs[i]``): the same split, so what passes here trains."""
    train_rows, _ = _split(len(src_langs), config)
    check_language_sizes([src_langs[i] for i in train_rows] + [tgt_langs[i] for i in train_rows], languages,
                         config.train.batch_size, origin,
                         f" left for training{when} (train.validation_fraction={config.train.validation_fraction:g} "
                         "held out)")


def _split(n: int, config: MeaningHeadConfig) -> tuple[np.ndarray, np.ndarray]:
    return split_validation(n, config.train.validation_fraction, config.bitext.data_seed)


def _settings(config: MeaningHeadConfig, seed: int, terms: list[str]):
    from interlingua.trainers.disentangle.objective import LossTerms
    from interlingua.trainers.disentangle.train import DisentangleSettings

    t = config.train
    return DisentangleSettings(batch_size=t.batch_size, lr=t.lr, max_epochs=t.max_epochs, patience=t.patience, seed=seed,
                               activation=t.activation, distance=t.distance,
                               terms=LossTerms(**{name: name in terms for name in TERMS}))


def _pack_tasks(config: MeaningHeadConfig, state: Path) -> tuple[Path, list[dict]]:
    from interlingua.evaluation.pack.build import read_manifest
    from interlingua.workflows.pack_eval import ensure_pack

    pack = ensure_pack(config.pack, state)
    entries = read_manifest(pack)["tasks"]
    chosen = []
    for pattern in config.tasks:
        hits = [e for e in entries if fnmatch.fnmatch(e["name"], pattern) and e["kind"] in ("retrieval", "mining")]
        if not hits:
            raise UserError(f"tasks: {pattern!r} matches no retrieval/mining task of {pack}; "
                            f"available: {', '.join(e['name'] for e in entries if e['kind'] in ('retrieval', 'mining'))}")
        chosen += [e for e in hits if e not in chosen]
    return pack, chosen


def _eval_texts(pack: Path, tasks: list[dict]) -> dict[str, list[str]]:
    from interlingua.evaluation.tasks.pack_tasks import pack_texts

    out: dict[str, list[str]] = {}
    for entry in tasks:
        for lang, texts in pack_texts(entry, pack).items():
            out.setdefault(lang, []).extend(texts)
    return out


class _EmbeddingLookup:
    """Frozen vectors of evaluation texts, from the cache filled in the embed stage."""

    def __init__(self, encoder, chunk: int):
        self.encoder, self.chunk = encoder, chunk

    def __call__(self, texts) -> np.ndarray:
        from interlingua.workflows.frozen_embeddings import embed

        vectors = embed(self.encoder, list(texts), chunk=self.chunk)
        if not np.isfinite(vectors).all():
            raise UserError(f"{self.encoder.name}: NaN/inf embeddings of evaluation texts")
        return vectors


def _train_all(config, pairs, languages, variants):
    from interlingua.trainers.disentangle.train import train_disentangle

    train_rows, val_rows = _split(len(pairs), config)
    train, validation = pairs.rows(train_rows), pairs.rows(val_rows)
    heads: dict[str, list] = {}
    histories: dict[str, dict[int, list]] = {}  # variant -> seed -> its per-epoch rows
    for name, terms in variants.items():
        for seed in config.seeds:
            started = time.time()
            result = train_disentangle(train, validation, languages, _settings(config, seed, terms))
            last = result.history[result.best_epoch - 1]
            print(f"  {name} seed {seed}: best epoch {result.best_epoch}/{len(result.history)} "
                  f"val loss {last['val_loss']:.4f} ({time.time() - started:.0f} s)", flush=True)
            heads.setdefault(name, []).append(result.model)
            histories.setdefault(name, {})[seed] = result.history
    return heads, histories


def _log_histories(run_id: str, histories: dict) -> None:
    """Every epoch's losses as ``train.<variant>.seed<SEED>.<loss>``, SEED the seed's value (as ``absent`` names it)."""
    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    client, now = MlflowClient(), int(time.time() * 1000)
    metrics = [Metric(_metric_key(f"train.{name}.seed{seed}.{key}"), value, now, int(row["epoch"]))
               for name, runs in histories.items() for seed, history in runs.items() for row in history
               for key, value in row.items() if key != "epoch"]
    for start in range(0, len(metrics), 1000):
        client.log_batch(run_id, metrics=metrics[start:start + 1000])


def table_metrics(rows: list[dict]) -> dict[str, float]:
    """MLflow metrics of the table: ``eval.<method>.<task>`` and ``…_std``; n/a cells (a method with no map
    for a language) have no value and are left out (MLflow refuses a metric without one)."""
    out = {}
    for row in rows:
        for task, stats in row["tasks"].items():
            if stats["mean"] is not None:
                key = _metric_key(f"eval.{row['method']}.{task}")
                out[key], out[key + "_std"] = stats["mean"], stats["std"]
    return out


def _metric_key(text: str) -> str:
    from interlingua.evaluation.report.mlflow_log import metric_key

    return metric_key(text.replace("−", "minus-").replace(" ", "_"))


def _baselines(pairs, languages: list[str]) -> dict:
    """method -> transform(vectors, language) or None where the method has nothing for that language."""
    from interlingua.trainers.baselines.linear_maps import language_means, least_squares_map

    vectors = np.concatenate([pairs.src, pairs.tgt])
    langs = np.array([languages[k] for k in np.concatenate([pairs.src_lang, pairs.tgt_lang])])
    means = language_means(vectors, langs)
    maps = {}
    if ENGLISH in languages:
        for k, lang in enumerate(languages):
            if lang == ENGLISH:
                continue
            src_is = (pairs.src_lang == k) & (pairs.tgt_lang == languages.index(ENGLISH))
            tgt_is = (pairs.tgt_lang == k) & (pairs.src_lang == languages.index(ENGLISH))
            x = np.concatenate([pairs.src[src_is], pairs.tgt[tgt_is]])
            y = np.concatenate([pairs.tgt[src_is], pairs.src[tgt_is]])
            if len(x):
                maps[lang] = least_squares_map(x, y)

    def centered(v, lang):
        # a language unseen in training: its mean over the evaluated texts (unlabelled, no pairs used)
        return v - means.get(lang, v.mean(axis=0))

    def projected(v, lang):
        if lang == ENGLISH:
            return v
        return v @ maps[lang] if lang in maps else None

    return {"raw": lambda v, lang: v, "centered": centered, "projected to en": projected}


def _evaluate(config, pack: Path, tasks: list[dict], lookup, baselines: dict, heads: dict) -> list[dict]:
    from interlingua.evaluation.metrics.seeds import mean_std
    from interlingua.evaluation.tasks.pack_tasks import PRIMARY_METRIC, run_pack_task_with

    class _NotApplicable(Exception):
        pass

    def scored(transform, seed):
        def embed(texts, lang):
            out = transform(lookup(texts), lang)
            if out is None:
                raise _NotApplicable(lang)
            return out

        result = {}
        for entry in tasks:
            try:
                result[entry["name"]] = run_pack_task_with(entry, pack, embed, seed)[PRIMARY_METRIC[entry["kind"]]]
            except _NotApplicable:
                result[entry["name"]] = None
        return result

    rows = []
    methods = [(name, [fn]) for name, fn in baselines.items()]
    methods += [(name, [_head_transform(model) for model in models]) for name, models in heads.items()]
    for name, transforms in methods:
        per_seed = [scored(fn, seed) for fn, seed in zip(transforms, config.seeds)]
        cells = {}
        for entry in tasks:
            values = [s[entry["name"]] for s in per_seed]
            if any(v is None for v in values):
                cells[entry["name"]] = {"mean": None, "std": None, "n": 0, "values": []}
            else:
                stats = mean_std(values)
                cells[entry["name"]] = {"mean": stats.mean, "std": stats.std, "n": stats.n, "values": values}
        rows.append({"method": name, "seeds": len(transforms), "tasks": cells})
    return rows


def _head_transform(model):
    import torch

    from interlingua.models.protocol import l2_normalize

    def transform(v, lang):
        with torch.no_grad():
            return model.meaning(torch.as_tensor(l2_normalize(v), dtype=torch.float32)).numpy()

    return transform


def format_table(rows: list[dict], task_names: list[str]) -> str:
    """Methods down, tasks across, ``mean ± std`` (percent; retrieval accuracy, mining F1); n/a where a
    method has no map for a language."""
    width = max(len(r["method"]) for r in rows) + 2
    header = f"{'method':{width}s}" + "".join(f"{n:>22s}" for n in task_names)
    lines = ["retrieval accuracy / mining F1 (%, mean ± std over seeds)", header]
    for row in rows:
        cells = []
        for name in task_names:
            stats = row["tasks"][name]
            cells.append(f"{'n/a':>22s}" if stats["mean"] is None else f"{stats['mean']:16.2f} ± {stats['std']:4.2f}")
        lines.append(f"{row['method']:{width}s}" + "".join(cells))
    return "\n".join(lines)


def _pca_chart(config, pack: Path, lookup, model, path: Path) -> Path:
    import torch

    from interlingua.evaluation.pack.tables import read_table
    from interlingua.evaluation.report.panels import write_pca_panels
    from interlingua.models.protocol import l2_normalize

    rows = read_table(pack / "bible_retrieval.parquet") if (pack / "bible_retrieval.parquet").is_file() else None
    if rows is None:
        return path
    n = min(config.pca_sentences, len(rows["source"]))
    texts = rows["source"][:n] + rows["target"][:n]
    raw = l2_normalize(lookup(texts))
    with torch.no_grad():
        meaning, language, _ = model(torch.as_tensor(raw, dtype=torch.float32))
    return write_pca_panels({"raw e": raw, "meaning ê_M": meaning.numpy(), "language ê_L": language.numpy()},
                            ["en"] * n + ["es"] * n, path, title="held-out Bible verses, PCA")


def _table_chart(rows: list[dict], path: Path) -> Path:
    from interlingua.evaluation.report.chart import write_chart
    from interlingua.evaluation.tasks.records import Measurement

    measurements = [Measurement(row["method"], task, "", "score", 0, stats["mean"], True)
                    for row in rows for task, stats in row["tasks"].items() if stats["mean"] is not None]
    return write_chart(measurements, path)


_NOT_REGISTRABLE = ("a meaning head over {spec!r} is not registered: the registry serves encoders with MLflow's "
                    "sentence_transformers flavor, and {spec!r} is not a sentence-transformers model")


def registrable(spec: str) -> bool:
    """Whether base ``spec`` + a meaning head is a sentence-transformers model (the flavor the registry
    uses); a spec base such as ``use`` (a numpy USE, not a transformer stack) is not."""
    from interlingua.models.meaning_head import SPEC_BASES

    return spec not in SPEC_BASES


def publish_encoder(spec: str, model, folder: Path, config: MeaningHeadConfig, run_id: str, bitext,
                    rows) -> tuple[str, str]:
    """Save base + meaning head as a composed encoder and publish it; returns the URIs ``load_encoder`` reads:
    (by alias, pinned).

    A transformer base is registered (``registered_model@alias`` and ``models:/NAME/VERSION``, sentence_transformers
    flavor). A spec base (``use``) cannot be served by that flavor: its composed folder (marker + head, the base
    named by spec) is logged as plain run artifacts under ``encoder/`` and ``runs:/RUN_ID/encoder`` is returned for
    both; ``interlingua embed|eval --model runs:/RUN_ID/encoder`` and ``load_encoder`` read it."""
    composed = _save_composed(spec, model, folder)
    if not registrable(spec):
        from mlflow.tracking import MlflowClient

        MlflowClient().log_artifacts(run_id, str(composed), artifact_path="encoder")
        uri = f"runs:/{run_id}/encoder"
        print(f"  {_NOT_REGISTRABLE.format(spec=spec)}; logged as run artifacts: --model {uri}")
        return uri, uri
    registered = _register(composed, config, run_id, spec, bitext, rows)
    print(f"  registered {registered.uri} (version {registered.version})")
    return registered.uri, registered.version_uri


def _save_composed(spec: str, model, folder: Path) -> Path:
    from interlingua.models.meaning_head import SPEC_BASES, save_composed

    if folder.exists():
        import shutil

        shutil.rmtree(folder)
    if spec in SPEC_BASES:
        return save_composed(model.meaning, folder, base_spec=spec)
    return save_composed(model.meaning, folder, base_folder=_base_folder(spec, folder.parent / "base"))


def _base_folder(spec: str, scratch: Path) -> Path:
    """A sentence-transformers folder of the base encoder (saved from our loader when it has no modules.json)."""
    if spec == "minilm":
        from interlingua.models.sentence_transformers_folder import minilm_model_dir

        return minilm_model_dir()
    if spec.startswith("st:"):
        return Path(spec[3:])
    from interlingua.models.load import load_encoder, resolve_model_folder

    folder = Path(resolve_model_folder(spec))
    if (folder / "modules.json").is_file():
        return folder
    load_encoder(spec).save(scratch)
    return scratch


def _register(folder: Path, config: MeaningHeadConfig, run_id: str, spec: str, bitext, rows: list[dict]):
    from interlingua.models.model_card import ModelCard
    from interlingua.models.registry import log_and_register_encoder

    card = ModelCard(base_model=spec, objective="meaning_head", workflow="meaning-head",
                     corpus_versions={bitext.origin.split("@")[0]: bitext.origin.split("@")[1]} if "@" in bitext.origin else {},
                     languages=bitext.languages, config=config.model_dump(mode="json"),
                     evaluation=[{"method": r["method"], **{t: s["mean"] for t, s in r["tasks"].items()}} for r in rows],
                     description="Frozen base encoder + meaning head MLP_M (Tiyajamorn et al. 2021); "
                                 "similarity = cosine of the meaning embeddings.")
    return log_and_register_encoder(str(folder), config.registered_model, config.alias, run_id, card=card)
