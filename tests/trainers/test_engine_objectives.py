"""Objectives as objects (fast): the registry, per-objective options in TrainConfig, the explicit-alignment
objective's word views on a tiny encoder (positions, truncation, both column formats, layers, the four
methods), the saved inference length, and word-retrieval accuracy against an independent computation."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from pydantic import ValidationError

from interlingua.core.config import ConfigError
from interlingua.models.sentence_encoder import SentenceEncoder
from interlingua.operators.align.word_pairs import first_subword_positions
from interlingua.trainers.engine.config import TrainConfig
from interlingua.trainers.engine.train_loop import build_objective, save_outputs
from interlingua.trainers.engine.train_module import EngineViews, TrainModule
from interlingua.trainers.gradcache import cached_step, plain_step
from interlingua.trainers.objectives import registry
from interlingua.trainers.objectives.base import Objective, ObjectiveOptions
from interlingua.trainers.objectives.explicit_alignment import (
    MAPPING_FILE,
    ContrastiveAlignmentLoss,
    L2AlignmentLoss,
    LinearAlignmentMapping,
)
from tiny_models import EN_ES_PAIRS, build_tiny_bert

BASE_LENGTH = 16  # the tiny encoder's saved max_seq_length


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("objectives")
    folder = root / "encoder"
    SentenceEncoder.from_folder(build_tiny_bert(root / "bert"), max_length=BASE_LENGTH).save(folder)
    return folder


@pytest.fixture
def encoder(encoder_dir):
    return SentenceEncoder.from_folder(encoder_dir)


def _bitext_rows(tokenizer, as_lists: bool = False) -> dict[str, np.ndarray]:
    """Word pairs like bitext-corpus writes them: word i of the source with word min(i, m-1) of the target,
    as first-subword positions of the pre-split words (with special tokens)."""
    rows = {"src_tokens": [], "tgt_tokens": [], "subword_pairs": []}
    for source, target in EN_ES_PAIRS:
        src_words, tgt_words = source.split(), target.split()
        src_pos, tgt_pos = first_subword_positions(tokenizer, src_words), first_subword_positions(tokenizer, tgt_words)
        pairs = [(src_pos[i], tgt_pos[min(i, len(tgt_words) - 1)]) for i in range(len(src_words))]
        pairs = list(dict.fromkeys(pairs))
        if as_lists:
            rows["src_tokens"].append(src_words)
            rows["tgt_tokens"].append(tgt_words)
            rows["subword_pairs"].append([list(p) for p in pairs])
        else:
            rows["src_tokens"].append(source)
            rows["tgt_tokens"].append(target)
            rows["subword_pairs"].append(" ".join(f"{i}-{j}" for i, j in pairs))
    out = {}
    for key, values in rows.items():
        column = np.empty(len(values), dtype=object)
        column[:] = values
        out[key] = column
    return out


def _alignment(encoder, method: str, max_length: int = 16, **options):
    config = TrainConfig(objective="explicit_alignment", method=method, max_length=max_length, batch_size=4,
                         **options)
    objective = build_objective(config, encoder)
    if not objective.trains_encoder:
        encoder.requires_grad_(False)
    return objective, TrainModule(encoder, objective), EngineViews(encoder, torch.device("cpu"), max_length)


# -- registry and config --------------------------------------------------------------------------------------


def test_registry_lists_builtins_and_suggests_close_names():
    assert {"translation_ranking", "simcse_unsup", "simcse_sup", "amr_retrofit", "ease",
            "explicit_alignment"} <= set(registry.objective_names())
    with pytest.raises(ValueError, match="did you mean 'translation_ranking'"):
        registry.objective_class("translation_rankin")
    with pytest.raises(ConfigError, match="unknown objective 'nope'"):
        TrainConfig(objective="nope")


def test_runtime_registration_and_name_clashes():
    class Clash(Objective):
        name = "ease"

    with pytest.raises(ValueError, match="'ease' is a built-in"):
        registry.register_objective(Clash)

    class ScaledOptions(ObjectiveOptions):
        weight: float = 2.0

    class Scaled(Objective):
        name = "test_scaled_registry"
        Options = ScaledOptions
        text_columns = ("a", "b")

    registry.register_objective(Scaled)
    registry.register_objective(Scaled)  # the same class again: no-op
    config = TrainConfig(objective="test_scaled_registry", weight=3.0)
    assert config.options == {"test_scaled_registry": {"weight": 3.0}} and config.weight == 3.0
    assert any(line.startswith("options.test_scaled_registry.weight (float, default 2.0)")
               for line in TrainConfig.field_help("options", "", None))

    class Other(Objective):
        name = "test_scaled_registry"

    with pytest.raises(ValueError, match="already registered"):
        registry.register_objective(Other)


def test_a_misspelt_objective_option_gets_the_close_name():
    """A typo in an option, nested or at the top level (where the chosen objective's options may also be set), is
    named with the option it is closest to; a key close to nothing keeps the plain hint."""
    from interlingua.core.config import format_validation_error

    def message(data: dict) -> str:
        with pytest.raises(ValidationError) as info:
            TrainConfig.model_validate(data)
        return format_validation_error(info.value, data, "c.yaml", TrainConfig)

    assert message({"options": {"translation_ranking": {"margn": 0.3}}}) == \
        "invalid config (c.yaml): objective 'translation_ranking': margn: unknown key; did you mean margin?"
    assert message({"objective": "simcse_sup", "temprature": 0.1}) == \
        "invalid config (c.yaml): temprature: unknown key; did you mean temperature? (an option of objective " \
        "'simcse_sup'; see --list-keys)"
    assert message({"lrr": 0.1}).endswith("lrr: unknown key (value 0.1); did you mean lr?")  # a field of the config
    assert message({"options": {"translation_ranking": {"zzz": 1}}}).endswith("zzz: unknown key; see --list-keys")


def test_objective_keys_at_top_level_and_in_options_round_trip():
    flat = TrainConfig(objective="explicit_alignment", method="weak", align_layer=1, temperature=0.2)
    nested = TrainConfig(objective="explicit_alignment",
                         options={"explicit_alignment": {"method": "weak", "align_layer": 1, "temperature": 0.2}})
    assert flat == nested and flat.objective_options.method == "weak"
    assert TrainConfig.model_validate(flat.model_dump()) == flat
    # a section of another objective would be ignored: refused (a workflow's defaults for it never get here)
    with pytest.raises(ValidationError, match="an option of objective 'translation_ranking', but the objective is "
                                              "'simcse_unsup', so it would be ignored"):
        TrainConfig.model_validate({**TrainConfig().model_dump(), "objective": "simcse_unsup"})
    with pytest.raises(ConfigError, match="'method' is an option of objective 'explicit_alignment'"):
        TrainConfig(objective="translation_ranking", method="l2")
    with pytest.raises(ConfigError, match="method: Input should be 'linear', 'l2', 'weak' or 'strong'"):
        TrainConfig(objective="explicit_alignment", method="medium")
    with pytest.raises(ConfigError, match="ZeRO 3"):
        TrainConfig(objective="explicit_alignment", zero_stage=3)
    TrainConfig(objective="translation_ranking", zero_stage=3)


# -- explicit alignment on word views -------------------------------------------------------------------------


def test_word_views_read_first_subwords_of_the_chosen_layer(encoder):
    objective, module, make = _alignment(encoder, "l2", align_layer=1)
    batch = _bitext_rows(encoder.tokenizer)
    views = objective.views({k: v[:4] for k, v in batch.items()}, make)
    assert views.counters["align_pairs_beyond_length"] == views.counters["align_pairs_not_word_start"] == 0
    source_view = views.tensors[0]
    with torch.no_grad():
        got = module(source_view)
        states = encoder.transformer(**{k: v for k, v in source_view.items() if k != "token_positions"},
                                     output_hidden_states=True).hidden_states[1]
    expected = [states[row, pos] for row in range(4) for pos in source_view["token_positions"][row].tolist() if pos >= 0]
    torch.testing.assert_close(got, torch.stack(expected))
    assert got.shape == (views.counters["align_pairs"], 32)


def test_the_progress_line_names_aligned_word_pairs_not_sentence_negatives(encoder):
    """Word alignment printed "0 negatives/anchor" on every step: true of sentences, but not what the step trains on."""
    objective, _, make = _alignment(encoder, "strong")
    views = objective.views(_bitext_rows(encoder.tokenizer), make)
    totals = {**views.counters, "align_pairs": 2 * views.counters["align_pairs"]}  # summed over two workers
    assert objective.progress_note(objective.negatives_per_anchor(8), totals) == (
        f"{2 * views.counters['align_pairs']} aligned word pairs")
    translation = build_objective(TrainConfig(objective="translation_ranking"), encoder)
    assert translation.progress_note(translation.negatives_per_anchor(8), {}) == "7 negatives/anchor"


def test_list_typed_columns_give_the_same_views(encoder):
    objective, _, make = _alignment(encoder, "strong")
    strings = objective.views(_bitext_rows(encoder.tokenizer), make)
    lists = objective.views(_bitext_rows(encoder.tokenizer, as_lists=True), make)
    assert strings.counters == lists.counters
    for a, b in zip(strings.tensors, lists.tensors):
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_positions_past_the_training_length_are_counted_and_dropped(encoder):
    rows = _bitext_rows(encoder.tokenizer)
    full, _, make = _alignment(encoder, "strong", max_length=16)
    short, _, short_make = _alignment(encoder, "strong", max_length=5)
    kept = full.views(rows, make).counters
    views = short.views(rows, short_make)
    # [CLS] + 3 tokens + [SEP]: positions 1..3 survive
    expected_kept = sum(1 for cell in rows["subword_pairs"] for pair in cell.split()
                        if max(map(int, pair.split("-"))) <= 3)
    assert views.counters["align_pairs"] == expected_kept
    assert views.counters["align_pairs_beyond_length"] == kept["align_pairs"] - expected_kept > 0
    assert int(views.tensors[0]["token_positions"].max()) <= 3


def test_a_missing_layer_is_refused_before_training(encoder_dir):
    from interlingua.trainers.engine.preflight import TrainingInputError, check_before_training

    class Dataset:
        def columns(self):
            return ["src_tokens", "tgt_tokens", "subword_pairs"]

    config = TrainConfig(objective="explicit_alignment", align_layer=5)
    with pytest.raises(TrainingInputError, match="align_layer=5: the encoder has 2 layers"):
        check_before_training(str(encoder_dir), Dataset(), config)
    with pytest.raises(TrainingInputError, match=r"lacks \['subword_pairs'\]"):
        check_before_training(str(encoder_dir), type("D", (), {"columns": lambda self: ["src_tokens", "tgt_tokens"]})(),
                              TrainConfig(objective="explicit_alignment"))
    assert check_before_training(str(encoder_dir), Dataset(), TrainConfig(objective="explicit_alignment",
                                                                          align_layer=2)).name == "explicit_alignment"


def test_linear_method_freezes_the_encoder_orthogonalises_and_saves_w(encoder, tmp_path):
    objective, module, make = _alignment(encoder, "linear", orthogonality_beta=0.1)
    assert not objective.trains_encoder and isinstance(objective.criterion, LinearAlignmentMapping)
    views = objective.views(_bitext_rows(encoder.tokenizer), make)
    plain_step(module, views.tensors, objective.loss)
    assert all(p.grad is None for p in encoder.parameters())
    weight = objective.criterion.weight
    with torch.no_grad():
        weight.add_(0.05 * torch.randn_like(weight))
    eye = torch.eye(weight.shape[0])
    before = torch.linalg.norm(weight @ weight.T - eye)
    objective.after_step()
    assert torch.linalg.norm(weight @ weight.T - eye) < before
    assert objective.save(tmp_path) == [MAPPING_FILE]
    with np.load(tmp_path / MAPPING_FILE, allow_pickle=False) as saved:
        np.testing.assert_allclose(saved["weight"], weight.detach().numpy())
        assert str(saved["direction"]) == "target_to_source"


def test_l2_method_anchors_the_encoder_to_its_initial_weights(encoder):
    objective, module, make = _alignment(encoder, "l2", regularization_weight=0.5)
    assert isinstance(objective.criterion, L2AlignmentLoss)
    anchor = objective.criterion.anchor
    assert float(anchor.penalty()) == 0.0
    parameter = encoder.get_parameter(anchor.names[0])
    with torch.no_grad():
        parameter.add_(0.1)
    assert float(anchor.penalty()) == pytest.approx((0.01 * parameter.numel()) ** 0.5, rel=1e-3)


@pytest.mark.parametrize("method, options, expected", [
    ("l2", {}, 1.0), ("l2", {"regularization_weight": 0.0}, None),
    ("weak", {}, None), ("strong", {"regularization_weight": 0.5}, 0.5),
])
def test_parameter_anchor_defaults_by_method(encoder, method, options, expected):
    objective, _, _ = _alignment(encoder, method, **options)
    criterion = objective.criterion
    assert (criterion.anchor is None) == (expected is None)
    if expected is not None:
        assert criterion.regularization_weight == expected


@pytest.mark.parametrize("method, options", [("weak", {}), ("strong", {}), ("strong", {"regularization_weight": 0.5})])
def test_contrastive_methods_use_a_d_d_128_head_and_gradcache_matches(encoder_dir, method, options):
    def run(step, chunk):
        encoder = SentenceEncoder.from_folder(encoder_dir)
        objective, module, make = _alignment(encoder, method, **options)
        if options:  # move the encoder off its anchor, so the penalty has a gradient
            with torch.no_grad():
                next(encoder.parameters()).add_(0.01)
        views = objective.views(_bitext_rows(encoder.tokenizer), make)
        torch.manual_seed(3)
        loss = step(module, views.tensors, objective.loss, chunk)
        return objective, loss, {n: p.grad.clone() for n, p in module.named_parameters() if p.grad is not None}

    objective, loss, grads = run(cached_step, 3)
    assert isinstance(objective.criterion, ContrastiveAlignmentLoss)
    head = [layer for layer in objective.criterion.head if isinstance(layer, torch.nn.Linear)]
    assert [(h.in_features, h.out_features) for h in head] == [(32, 32), (32, 128)]
    _, ref_loss, ref = run(plain_step, 3)
    torch.testing.assert_close(loss, ref_loss)
    assert ref.keys() == grads.keys() and any(k.startswith("objective.criterion.head") for k in ref)
    for name in ref:
        torch.testing.assert_close(grads[name], ref[name], rtol=1e-4, atol=1e-6)


# -- outputs --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("save_max_length, expected", [(None, BASE_LENGTH), (24, 24)])
def test_saved_model_keeps_the_base_inference_length_unless_set(encoder, tmp_path, save_max_length, expected):
    config = TrainConfig(max_length=8, save_max_length=save_max_length)
    objective = build_objective(config, encoder)
    save_length = config.save_max_length or encoder.max_length
    encoder.max_length = config.max_length  # what the train loop does while training
    assert save_outputs(str(tmp_path), encoder, objective, save_length) == []
    saved = json.loads((tmp_path / "encoder" / "sentence_bert_config.json").read_text())
    assert saved["max_seq_length"] == expected
    assert SentenceEncoder.from_folder(tmp_path / "encoder").max_length == expected
    assert encoder.max_length == 8  # training goes on at the training length


def test_word_retrieval_accuracy_equals_an_independent_nearest_neighbour(encoder, tmp_path):
    from interlingua.evaluation.tasks.word_retrieval import linear_map, word_retrieval_accuracy

    rows = _bitext_rows(encoder.tokenizer)
    encoder.eval()  # no dropout in the reference below either
    result = word_retrieval_accuracy(encoder, rows, layer=1, batch_size=1)  # unpadded, like the reference
    # independent: one sentence at a time, hidden states by hand, cosine argmax in numpy
    sources, targets = [], []
    with torch.no_grad():
        for src, tgt, cell in zip(rows["src_tokens"], rows["tgt_tokens"], rows["subword_pairs"]):
            hidden = []
            for words in (src.split(), tgt.split()):
                enc = encoder.tokenizer(words, is_split_into_words=True, return_tensors="pt")
                hidden.append(encoder.transformer(**enc, output_hidden_states=True).hidden_states[1][0].numpy())
            for pair in cell.split():
                i, j = map(int, pair.split("-"))
                sources.append(hidden[0][i])
                targets.append(hidden[1][j])
    s = np.array(sources) / np.linalg.norm(sources, axis=1, keepdims=True)
    t = np.array(targets) / np.linalg.norm(targets, axis=1, keepdims=True)
    expected = 100.0 * np.mean(np.argmax(s @ t.T, axis=1) == np.arange(len(s)))
    assert result.pairs == len(s) and result.beyond_length == 0
    assert result.accuracy == pytest.approx(expected)
    # a saved linear map W is applied to the target vectors (y -> W y, into the source space), not to the sources
    weight = (np.eye(32) + np.random.default_rng(3).normal(size=(32, 32)) / 4).astype(np.float32)
    np.savez(tmp_path / "w.npz", weight=weight, direction=np.asarray("target_to_source"))
    mapped = word_retrieval_accuracy(encoder, rows, layer=1, batch_size=1, target_map=linear_map(str(tmp_path / "w.npz")))
    wt = np.array(targets) @ weight.T
    wt /= np.linalg.norm(wt, axis=1, keepdims=True)
    expected_mapped = 100.0 * np.mean(np.argmax(s @ wt.T, axis=1) == np.arange(len(s)))
    ws = np.array(sources) @ weight.T
    ws /= np.linalg.norm(ws, axis=1, keepdims=True)
    mapped_sources = 100.0 * np.mean(np.argmax(ws @ t.T, axis=1) == np.arange(len(s)))
    assert mapped.accuracy == pytest.approx(expected_mapped)
    assert expected_mapped != pytest.approx(mapped_sources)  # the direction is visible in this check
    # a file of an older version (no direction: W maps sources to targets) is read as its inverse on the targets
    np.savez(tmp_path / "old.npz", weight=np.linalg.inv(weight))
    legacy = word_retrieval_accuracy(encoder, rows, layer=1, batch_size=1, target_map=linear_map(str(tmp_path / "old.npz")))
    assert legacy.accuracy == pytest.approx(expected_mapped)
    np.savez(tmp_path / "bad.npz", weight=weight, direction=np.asarray("sideways"))
    with pytest.raises(ValueError, match="direction 'sideways'"):
        linear_map(str(tmp_path / "bad.npz"))


def test_scalar_parameters_are_refused_with_the_fix():
    from interlingua.trainers.engine.deepspeed_setup import check_parameter_shapes

    module = torch.nn.Module()
    module.logit_scale = torch.nn.Parameter(torch.tensor(2.0))
    module.fine = torch.nn.Parameter(torch.tensor([2.0]))
    with pytest.raises(ValueError, match=r"\['logit_scale'\] are 0-dim scalars.*shape \[1\]"):
        check_parameter_shapes(module)
    del module.logit_scale
    check_parameter_shapes(module)
