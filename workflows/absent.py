"""Workflow ``absent``: ABSent (Fu et al. 2020) bidirectional GAN mapping between two languages' sentence
vectors (averaged or TF-IDF-weighted word vectors), against the linear baselines, at several parallel ratios.

1. **bitext** (training pairs; default the Bible en-es minus the held-out verses) and the **test pairs**
   (default: the benchmark pack's held-out Bible verses).
2. **word vectors** per side: given files (word2vec / fastText text or binary, checked line by line) or
   trained here with gensim on that side of the training bitext (saved as word2vec text in the state).
3. **sentence vectors**: mean or TF-IDF-weighted average (IDF from the training side), L2-normalized;
   sentences without a known word, or whose word vectors sum to zero, are rejected and counted by reason.
4. For each parallel ratio and seed: that share of the pairs stays parallel, the rest is used unpaired;
   the baselines (least squares, orthogonal Procrustes; nearest neighbour by cosine and by CSLS) are fitted
   on the parallel part; each GAN variant trains on both parts.
5. **evaluate**: P@1 / P@5 in both directions on the test pairs; table (mean ± std over seeds), JSON, a PNG
   of P@1 against the parallel ratio; all in an MLflow run with the params and per-epoch losses. The
   generators of the first seed at the largest ratio are logged as safetensors artifacts.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
from pydantic import AfterValidator, Field, PositiveInt, field_validator

from interlingua.core.config import Config, no_repeats
from interlingua.core.errors import UserError
from interlingua.core.names import ExperimentName, Location
from interlingua.workflows.frozen_bitext import BitextSource

DESCRIPTION = "ABSent GAN mapping of word-vector sentence embeddings vs least squares / Procrustes / CSLS, P@1/P@5 by parallel ratio"
BASELINES = ("least squares", "procrustes", "procrustes + CSLS")


class WordVectorConfig(Config):
    src: str | None = Field(None, description="word2vec/fastText file (.vec/.txt text, .bin binary) of the src language; "
                            "default: trained with gensim on the src side of the bitext")
    tgt: str | None = Field(None, description="the same for the tgt language")
    dim: int = Field(300, ge=2, description="dimension of vectors trained here")
    epochs: int = Field(10, ge=1)
    min_count: int = Field(2, ge=1)
    seed: int = 0


class AbsentTrainConfig(Config):
    batch_size: int = Field(128, ge=2)
    lr: float = Field(2e-3, gt=0)
    epochs: int = Field(10, ge=1)
    hidden: list[PositiveInt] = Field([512, 1024, 512], min_length=1, description="hidden layer widths")
    paired_weight: float = Field(1.0, ge=0)
    init: Literal["procrustes", "random"] = Field("procrustes", description="generator start: the Procrustes map of "
                                                  "the parallel pairs through a linear skip path, or the paper's random MLP")


class AbsentConfig(Config):
    state_dir: str | None = None
    bitext: BitextSource = Field(default_factory=BitextSource)
    test_file: Location | None = Field(None, description="test pairs: Parquet with source/target (default: the pack's bible_retrieval)")
    pack: str | None = Field(None, description="benchmark pack folder (default <state>/bench-pack, built when missing)")
    word_vectors: WordVectorConfig = Field(default_factory=WordVectorConfig)
    weighting: Literal["mean", "tfidf"] = Field("tfidf", description="sentence vector: mean or TF-IDF-weighted mean")
    center: bool = Field(True, description="unit length, minus the training side's mean, unit length again "
                         "(averaged word vectors share a large common direction)")
    ratios: list[float] = Field([0.1, 0.2, 0.4, 1.0], min_length=1)
    variants: Annotated[list[Literal["absent", "uni-sent", "no-mismatch", "cgan"]], AfterValidator(no_repeats)] = Field(
        ["absent", "uni-sent"], min_length=1, description="GAN variants")
    seeds: Annotated[list[int], AfterValidator(no_repeats)] = Field([1], min_length=1)
    csls_k: int = Field(10, ge=1)
    train: AbsentTrainConfig = Field(default_factory=AbsentTrainConfig)
    experiment: ExperimentName = "absent"

    @field_validator("ratios")
    @classmethod
    def _ratios(cls, value):
        bad = [r for r in value if not 0 < r <= 1]
        if bad:
            raise ValueError(f"ratios must lie in (0, 1]; got {bad}")
        return sorted(set(value))


CONFIG = AbsentConfig


def run(config: AbsentConfig, *, address: str | None = None) -> dict:
    from interlingua.core.progress import Stages
    from interlingua.core.runtime import check_tracking_store, configure_mlflow, state_dir
    from interlingua.workflows.frozen_bitext import check_language_sizes, load_bitext

    stages = Stages("absent")
    state = state_dir(config.state_dir)
    check_tracking_store(state)  # an MLflow server that does not answer: exit 69 before the vectors are learned
    with stages("bitext"):
        bitext = load_bitext(config.bitext, state)
        if len(set(bitext.src_langs)) != 1 or len(set(bitext.tgt_langs)) != 1:
            raise UserError(f"{bitext.origin}: ABSent maps one language pair; got src {sorted(set(bitext.src_langs))}, "
                            f"tgt {sorted(set(bitext.tgt_langs))}")
        src_lang, tgt_lang = bitext.src_langs[0], bitext.tgt_langs[0]
        # known once loaded: refused before the word vectors, Ray or any sentence is embedded
        check_language_sizes(bitext.src_langs + bitext.tgt_langs, [src_lang, tgt_lang], config.train.batch_size,
                             bitext.origin)
        test_src, test_tgt, test_ids, test_origin, test_dropped = _test_pairs(config, state)
        print(f"  {len(bitext)} training pairs ({src_lang}-{tgt_lang}) from {bitext.origin}; {len(test_src)} test pairs from {test_origin}")
    with stages("word vectors"):
        # word vectors and IDF are monolingual statistics: learned from every training-side sentence, not
        # only the sampled pairs (the held-out test verses stay out)
        pool = load_bitext(config.bitext.model_copy(update={"max_pairs": None}), state)
        encoders = {side: _sentence_encoder(config, state, side, lang, texts, bitext.origin)
                    for side, lang, texts in (("src", src_lang, pool.src), ("tgt", tgt_lang, pool.tgt))}
    with stages("sentence vectors"):
        (x, y), train_why = _pair_vectors(encoders, bitext.src, bitext.tgt)
        (tx, ty), test_why = _pair_vectors(encoders, test_src, test_tgt)
        keep, test_keep = _kept(train_why), _kept(test_why)
        rejects = {**reject_counts("train", train_why), **reject_counts("test", test_why),
                   **{f"test_{reason}": count for reason, count in test_dropped.items()}}
        rejected_rows = [{"split": split, "id": ids[i], "reason": reason, "src": src[i], "tgt": tgt[i]}
                         for split, why, ids, src, tgt in (("train", train_why, bitext.ids, bitext.src, bitext.tgt),
                                                           ("test", test_why, test_ids, test_src, test_tgt))
                         for i, reason in enumerate(why) if reason]
        if rejected_rows:
            print(f"  rejected pairs with a side without a usable word vector: {rejects}", file=sys.stderr)
        x, y, tx, ty = x[keep], y[keep], tx[test_keep], ty[test_keep]
        if config.center:  # each side's mean over its training sentences, applied to its test sentences too
            (x, tx), (y, ty) = center_unit(x, tx), center_unit(y, ty)
        if len(x) < config.train.batch_size:
            raise UserError(f"{bitext.origin}: {len(x)} usable pairs, fewer than a batch (train.batch_size="
                            f"{config.train.batch_size})")
        if len(tx) < 5:
            raise UserError(f"{test_origin}: {len(tx)} usable test pairs; P@5 needs at least 5")

    import mlflow

    from interlingua.core import tracking

    configure_mlflow(config.experiment, state)
    with mlflow.start_run(run_name=f"absent-{time.strftime('%Y%m%d-%H%M%S')}") as active:
        run_id = active.info.run_id
        tracking.log_params({"bitext_origin": bitext.origin, "pairs": len(x), "test_pairs": len(tx),
                             "test_origin": test_origin, **config.model_dump(mode="json")})
        tracking.set_tags({"interlingua.workflow": "absent", "interlingua.languages": f"{src_lang},{tgt_lang}"})
        mlflow.log_metrics({f"rejected.{k}": v for k, v in {**rejects, **bitext.rejected}.items()})
    with stages("train + evaluate"):
        results, histories, saved = _sweep(config, x, y, tx, ty)
    out = state / "absent" / run_id[:8]
    out.mkdir(parents=True, exist_ok=True)
    with stages("report"):
        rows = summarize(results)
        table = format_table(rows, config.ratios, src_lang, tgt_lang)
        print(table)
        (out / "results.txt").write_text(table + "\n", encoding="utf-8")
        counts = {**bitext.rejected, **rejects}
        (out / "results.json").write_text(json.dumps({"rows": rows, "runs": results, "rejects_by_reason": counts}, indent=2)
                                          + "\n", encoding="utf-8")
        (out / "rejected.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rejected_rows),
                                            encoding="utf-8")
        chart = _ratio_chart(rows, out / "p_at_1_by_ratio.png", src_lang, tgt_lang)
        weights = _save_generators(saved, out / "generators")
        _log_run(run_id, histories, rows, [out / "results.txt", out / "results.json", out / "rejected.jsonl", chart],
                 weights)
    print(f"absent: done in {sum(stages.seconds.values()):.0f} s; table in {out / 'results.txt'}")
    return {"run_id": run_id, "results": str(out / "results.json"), "chart": str(chart), "pairs": len(x),
            "test_pairs": len(tx), "rejects_by_reason": counts}


# ----------------------------------------------------------------------------------------------- helpers


def _pair_vectors(encoders: dict, src: list[str], tgt: list[str]) -> tuple[tuple[np.ndarray, np.ndarray], list]:
    """Both sides' sentence vectors and each pair's reject reason (its src side's, else its tgt side's; None: kept)."""
    x, x_why = encoders["src"].encode_with_reasons(src)
    y, y_why = encoders["tgt"].encode_with_reasons(tgt)
    return (x, y), [a or b for a, b in zip(x_why, y_why)]


def _kept(reasons: list) -> np.ndarray:
    return np.array([reason is None for reason in reasons], dtype=bool)


def reject_counts(split: str, reasons: list) -> dict[str, int]:
    """``<split>_<reason>``: the pairs of ``split`` rejected for each sentence-vector reason (0 included)."""
    from interlingua.models.weighted_word_vectors import REJECT_REASONS

    return {f"{split}_{reason}": sum(r == reason for r in reasons) for reason in REJECT_REASONS}


def center_unit(train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """``train`` and ``others`` minus the mean of ``train``, each row L2-normalized (Artetxe et al. 2018's
    "unit length, center, unit length"; the inputs are already unit length)."""
    from interlingua.models.protocol import l2_normalize

    mean = np.asarray(train, dtype=np.float64).mean(axis=0)
    return [l2_normalize(np.asarray(a, dtype=np.float64) - mean).astype(np.float32) for a in (train, *others)]


def _test_pairs(config: AbsentConfig, state: Path) -> tuple[list[str], list[str], list[str], str, dict[str, int]]:
    """The test pairs (source texts, target texts, ids: the file's id column, else the row number), where they came
    from, and the pairs dropped by reason."""
    from interlingua.evaluation.pack.pairs import clean_pair_indices
    from interlingua.evaluation.pack.tables import read_table

    if config.test_file:
        path = Path(config.test_file)
        if not path.is_file():
            raise UserError(f"test_file {path} does not exist")
    else:
        from interlingua.workflows.pack_eval import ensure_pack

        pack = ensure_pack(config.pack, state)
        path = pack / "bible_retrieval.parquet"
        if not path.is_file():
            raise UserError(f"{path} missing: the pack has no Bible retrieval task (build the Bible asset with "
                            f"`interlingua assets bible`, or give test_file=...)")
    rows = read_table(path)
    if "source" not in rows or "target" not in rows:
        raise UserError(f"{path}: test pairs need columns source and target; has {sorted(rows)}")
    # a repeated text would make the gold target ambiguous (P@k counts row i as the only gold): dropped and counted
    kept, dropped = clean_pair_indices(list(rows["source"]), list(rows["target"]))
    ids = [str(v) for v in rows["id"]] if "id" in rows else [str(i) for i in range(len(rows["source"]))]
    return ([rows["source"][i] for i in kept], [rows["target"][i] for i in kept], [ids[i] for i in kept], str(path),
            dict(dropped))


def _sentence_encoder(config: AbsentConfig, state: Path, side: str, lang: str, texts: list[str], origin: str):
    from interlingua.models.weighted_word_vectors import WordVectorSentenceEncoder, fit_idf
    from interlingua.models.word_vector_files import read_word_vectors

    given = getattr(config.word_vectors, side)
    path = Path(given) if given else _trained_vectors(config.word_vectors, state, lang, texts, origin)
    stats: dict[str, int] = {}
    words, matrix = read_word_vectors(path, stats=stats)
    repeated = f" ({stats['repeated_words']} repeated words: first vector kept)" if stats["repeated_words"] else ""
    print(f"  {side} ({lang}): {len(words)} word vectors of dimension {matrix.shape[1]} from {path}{repeated}")
    idf = fit_idf(texts) if config.weighting == "tfidf" else None
    return WordVectorSentenceEncoder(words, matrix, weighting=config.weighting, idf=idf, name=f"wordvec:{path}")


def _trained_vectors(settings, state: Path, lang: str, texts: list[str], origin: str) -> Path:
    """Word vectors trained on ``texts``, cached by a hash of the texts and the settings."""
    from interlingua.models.word_vector_files import write_word_vectors
    from interlingua.trainers.word2vec_vectors import train_word_vectors

    digest = hashlib.sha256(json.dumps([settings.model_dump(mode="json"), texts]).encode("utf-8")).hexdigest()[:16]
    path = state / "absent" / "word-vectors" / f"{lang}-{digest}.vec"
    if not path.is_file():
        print(f"  training {lang} word vectors with gensim on {len(texts)} sentences of {origin}", flush=True)
        words, matrix = train_word_vectors(texts, dim=settings.dim, epochs=settings.epochs,
                                           min_count=settings.min_count, seed=settings.seed)
        partial = path.with_suffix(".partial")
        write_word_vectors(partial, words, matrix)
        partial.rename(path)
    return path


def _sweep(config: AbsentConfig, x, y, tx, ty):
    from interlingua.trainers.absent.train import AbsentSettings, split_parallel, train_absent

    results, histories, saved = [], {}, {}
    for ratio in config.ratios:
        for seed in config.seeds:
            parallel, unpaired = split_parallel(len(x), ratio, seed)
            xp, yp = x[parallel], y[parallel]
            run = {"ratio": ratio, "seed": seed, "parallel_pairs": len(parallel)}  # at least 2, whatever the ratio
            for method, scores in _baseline_scores(xp, yp, tx, ty, config.csls_k).items():
                results.append({"method": method, **run, **scores})
            for variant in config.variants:
                started = time.time()
                settings = AbsentSettings(variant=variant, batch_size=config.train.batch_size, lr=config.train.lr,
                                          epochs=config.train.epochs, hidden=tuple(config.train.hidden),
                                          paired_weight=config.train.paired_weight, seed=seed,
                                          init=config.train.init)
                trained = train_absent(xp, yp, x[unpaired], y[unpaired], settings)
                histories[(variant, ratio, seed)] = trained.history
                scores = _mapped_scores(trained.map_x(tx), ty, trained.map_y(ty) if trained.backward else None, tx,
                                        trained.map_x, config.csls_k)
                results.append({"method": variant, **run, **scores})
                print(f"  {variant} ratio {ratio:.0%} seed {seed}: P@1 {scores['p1_src2tgt']:.1f} / {scores['p1_tgt2src']:.1f} "
                      f"({time.time() - started:.0f} s)", flush=True)
                if seed == config.seeds[0] and ratio == config.ratios[-1]:
                    saved[variant] = trained
    return results, histories, saved


def _baseline_scores(xp, yp, tx, ty, csls_k: int) -> dict[str, dict]:
    from interlingua.trainers.baselines.linear_maps import least_squares_map, procrustes_map

    forward, backward = least_squares_map(xp, yp), least_squares_map(yp, xp)
    out = {"least squares": _scores(tx @ forward, ty, ty @ backward, tx, "cosine", csls_k)}
    if xp.shape[1] == yp.shape[1]:
        w = procrustes_map(xp, yp)
        out["procrustes"] = _scores(tx @ w, ty, ty @ w.T, tx, "cosine", csls_k)
        out["procrustes + CSLS"] = _scores(tx @ w, ty, ty @ w.T, tx, "csls", csls_k)
    return out


def _mapped_scores(x_mapped, ty, y_mapped, tx, map_x, csls_k: int) -> dict:
    if y_mapped is None:  # uni-sent: retrieve X for a Y query among the G-mapped X
        forward = _scores(x_mapped, ty, None, None, "cosine", csls_k)
        backward = _precision(ty, map_x(tx), "cosine", csls_k)
        return {**forward, "p1_tgt2src": backward[1], "p5_tgt2src": backward[5]}
    return _scores(x_mapped, ty, y_mapped, tx, "cosine", csls_k)


def _scores(x_mapped, ty, y_mapped, tx, scoring: str, csls_k: int) -> dict:
    forward = _precision(x_mapped, ty, scoring, csls_k)
    out = {"p1_src2tgt": forward[1], "p5_src2tgt": forward[5]}
    if y_mapped is not None:
        backward = _precision(y_mapped, tx, scoring, csls_k)
        out.update(p1_tgt2src=backward[1], p5_tgt2src=backward[5])
    return out


def _precision(queries, candidates, scoring: str, csls_k: int) -> dict[int, float]:
    from interlingua.evaluation.metrics.precision_at_k import precision_at_k

    return precision_at_k(queries, candidates, ks=(1, 5), scoring=scoring, csls_k=csls_k)


METRICS = ("p1_src2tgt", "p5_src2tgt", "p1_tgt2src", "p5_tgt2src")


def summarize(results: list[dict]) -> list[dict]:
    """One row per (method, ratio): mean and std over seeds of each metric."""
    from interlingua.evaluation.metrics.seeds import mean_std

    groups: dict[tuple, list[dict]] = {}
    for r in results:
        groups.setdefault((r["method"], r["ratio"]), []).append(r)
    rows = []
    for (method, ratio), runs in groups.items():
        row = {"method": method, "ratio": ratio, "seeds": len(runs),
               "parallel_pairs": sorted({r["parallel_pairs"] for r in runs if "parallel_pairs" in r})}
        for metric in METRICS:
            stats = mean_std([r[metric] for r in runs])
            row[metric], row[metric + "_std"] = stats.mean, stats.std
        rows.append(row)
    return rows


def format_table(rows: list[dict], ratios: list[float], src: str, tgt: str) -> str:
    methods = list(dict.fromkeys(r["method"] for r in rows))
    by_key = {(r["method"], r["ratio"]): r for r in rows}
    lines = [f"P@1 / P@5 (%) on held-out pairs, mean ± std over seeds; {src}→{tgt} | {tgt}→{src}"]
    lines.append(f"{'method':20s}" + "".join(f"{f'ratio {r:.0%}':>44s}" for r in ratios))
    for method in methods:
        cells = []
        for ratio in ratios:
            r = by_key.get((method, ratio))
            cells.append(f"{'-':>44s}" if r is None else
                         f"{r['p1_src2tgt']:5.1f}±{r['p1_src2tgt_std']:3.1f}/{r['p5_src2tgt']:5.1f}±{r['p5_src2tgt_std']:3.1f}"
                         f" | {r['p1_tgt2src']:5.1f}±{r['p1_tgt2src_std']:3.1f}/{r['p5_tgt2src']:5.1f}±{r['p5_tgt2src_std']:3.1f}"
                         .rjust(44))
        lines.append(f"{method:20s}" + "".join(cells))
    return "\n".join(lines)


def _ratio_chart(rows: list[dict], path: Path, src: str, tgt: str) -> Path:
    from interlingua.evaluation.report.panels import write_metric_curves

    curves: dict[str, dict] = {}
    for r in rows:
        mean = (r["p1_src2tgt"] + r["p1_tgt2src"]) / 2
        std = (r["p1_src2tgt_std"] + r["p1_tgt2src_std"]) / 2
        curves.setdefault(r["method"], {})[100 * r["ratio"]] = (mean, std)
    return write_metric_curves(curves, path, xlabel="parallel pairs used (%)", ylabel=f"P@1 (%), mean of {src}→{tgt} and {tgt}→{src}",
                               title="ABSent vs linear baselines on held-out pairs")


def _save_generators(saved: dict, folder: Path) -> list[Path]:
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for variant, trained in saved.items():
        for name, net in (("G", trained.forward), ("F", trained.backward)):
            if net is not None:
                path = folder / f"{variant}-{name}.safetensors"
                save_file({k: v.contiguous() for k, v in net.state_dict().items()}, str(path))
                paths.append(path)
    return paths


def _log_run(run_id: str, histories: dict, rows: list[dict], artifacts: list[Path], weights: list[Path]) -> None:
    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    from interlingua.evaluation.report.mlflow_log import metric_key

    client, now = MlflowClient(), int(time.time() * 1000)
    metrics = [Metric(metric_key(f"train.{variant}.ratio{ratio:g}.seed{seed}.{key}"), value, now, int(row["epoch"]))
               for (variant, ratio, seed), history in histories.items() for row in history
               for key, value in row.items() if key != "epoch"]
    for r in rows:
        for metric in METRICS:
            base = metric_key(f"eval.{r['method'].replace(' ', '_').replace('+', 'plus')}.ratio{r['ratio']:g}.{metric}")
            metrics += [Metric(base, r[metric], now, 0), Metric(base + "_std", r[metric + "_std"], now, 0)]
    for start in range(0, len(metrics), 1000):
        client.log_batch(run_id, metrics=metrics[start:start + 1000])
    for path in artifacts:
        client.log_artifact(run_id, str(path), artifact_path="evaluation")
    for path in weights:
        client.log_artifact(run_id, str(path), artifact_path="generators")
