"""AMR retrofit: Algorithm 1 mixing statistics, vocabulary extension on a real tiny WordPiece tokenizer,
the four embedding combinations, and a tiny AMR encoder trained on mixed batches."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))

from contrastive_harness import VOCAB, TinyEncoder, train_losses  # noqa: E402

from interlingua.models.combined import COMBINATIONS  # noqa: E402
from interlingua.models.combined import combine_embeddings as encoder_combination  # noqa: E402
from interlingua.trainers.objectives.amr_mixing import AMRVariant, MixedTrainingSampler  # noqa: E402
from interlingua.trainers.objectives.amr_retrofit import AMRRetrofitLoss, combine_embeddings  # noqa: E402
from interlingua.trainers.objectives.amr_vocabulary import (  # noqa: E402
    extend_vocabulary,
    frequent_amr_symbols,
    graph_symbols,
)
from interlingua.trainers.objectives.contrastive import info_nce  # noqa: E402

SLOT = {
    "en": AMRVariant("the boy wants to go", "( w / want-01 :ARG0 ( b / boy ) :ARG1 ( g / go-02 :ARG0 b ) )"),
    "de": AMRVariant("der Junge will gehen", "( w / want-01 :ARG0 ( j / junge ) )"),
    "fr": AMRVariant("le garçon veut partir", None),
}


def test_mixing_follows_algorithm_1():
    sampler = MixedTrainingSampler(["en", "de", "fr"], seed=1)
    inputs = sampler.mix_batch([SLOT] * 3000)
    english = [item for item in inputs if item.language == "en"]
    german = [item for item in inputs if item.language == "de"]
    assert not [item for item in inputs if item.language == "fr"]  # fr has no graph: never used
    assert all(item.is_graph and item.content == SLOT["de"].graph for item in german)
    english_graph_share = sum(item.is_graph for item in english) / len(english)
    assert english_graph_share == pytest.approx(0.5, abs=0.04)
    assert {item.content for item in english} == {SLOT["en"].text, SLOT["en"].graph}
    # fr is drawn 1/3 of the time, then redrawn between en and de
    assert sampler.unavailable[("fr", "no graph")] == pytest.approx(1000, abs=90)
    assert len(english) == pytest.approx(1500, abs=110)
    again = MixedTrainingSampler(["en", "de", "fr"], seed=1).mix_batch([SLOT] * 50)
    assert again == inputs[:50]


def test_mixing_validates_its_inputs():
    with pytest.raises(ValueError, match="include english='en'"):
        MixedTrainingSampler(["de", "fr"])
    with pytest.raises(ValueError, match="english_graph_probability must be a probability"):
        MixedTrainingSampler(["en"], english_graph_probability=1.5)
    with pytest.raises(ValueError, match="needs its 'en' version"):
        MixedTrainingSampler(["en", "de"]).choose({"de": SLOT["de"]})


def test_frequent_relations_and_frames():
    graph = "( w / want-01 :ARG0 ( b / boy ) :ARG1-of ( g / go-02 :ARG0 b ) )"
    assert graph_symbols(graph) == ["want-01", ":ARG0", ":ARG1-of", "go-02", ":ARG0"]
    graphs = [graph] * 3 + ["( w / want-01 :mod ( x / boy ) )"] * 2
    assert frequent_amr_symbols(graphs, min_count=5) == [":ARG0", "want-01"]
    with pytest.raises(ValueError, match="min_count must be >= 1"):
        frequent_amr_symbols(graphs, min_count=0)


def test_vocabulary_extension_initialises_new_rows_as_subtoken_means():
    from transformers import BertConfig, BertModel, BertTokenizer

    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ":", "arg", "##0", "want", "-", "01", "boy"]
    tokenizer = BertTokenizer(vocab={token: row for row, token in enumerate(vocabulary)}, do_lower_case=True)
    torch.manual_seed(0)
    model = BertModel(BertConfig(vocab_size=len(vocabulary), hidden_size=8, num_hidden_layers=1,
                                 num_attention_heads=2, intermediate_size=16))
    old = model.get_input_embeddings().weight.detach().clone()
    report = extend_vocabulary(tokenizer, model, [":ARG0", "want-01", "boy"])
    assert report.added == [":ARG0", "want-01"]
    assert report.skipped == {"boy": "already in the vocabulary"}
    new = model.get_input_embeddings().weight.detach()
    ids = tokenizer.get_vocab()
    torch.testing.assert_close(new[ids[":ARG0"]], old[[5, 6, 7]].mean(dim=0))
    torch.testing.assert_close(new[ids["want-01"]], old[[8, 9, 10]].mean(dim=0))
    torch.testing.assert_close(new[: len(vocabulary)], old)
    assert tokenizer.tokenize("want-01 :ARG0 boy") == ["want-01", ":ARG0", "boy"]


def test_embedding_combinations():
    s, h = torch.tensor([[3.0, 4.0]]), torch.tensor([[0.0, 2.0]])
    torch.testing.assert_close(combine_embeddings(s, h), torch.tensor([[0.6, 0.8, 0.0, 1.0]]))
    torch.testing.assert_close(combine_embeddings(s, h, "concat"), torch.tensor([[3.0, 4.0, 0.0, 2.0]]))
    torch.testing.assert_close(combine_embeddings(s, h, "sum"), torch.tensor([[3.0, 6.0]]))
    torch.testing.assert_close(combine_embeddings(s, h, "norm_sum"), torch.tensor([[0.6, 1.8]]))
    with pytest.raises(ValueError, match="^combination mode 'product' is not one of concat, sum, norm_concat, norm_sum$"):
        combine_embeddings(s, h, "product")
    with pytest.raises(ValueError, match="needs equal dimensions"):
        combine_embeddings(s, torch.ones(1, 3), "sum")


@pytest.mark.parametrize("mode", COMBINATIONS)
def test_the_torch_combination_is_the_encoders_combination(mode):
    """The trainer's torch combine_embeddings takes the modes models.combined (CombinedEncoder, MODE(A|B) specs, the
    combine workflow) takes, by the same names, and gives the same vectors (a zero row stays zero in both)."""
    generator = torch.Generator().manual_seed(0)
    s, h = torch.randn(5, 4, generator=generator), torch.randn(5, 4, generator=generator)
    s[2] = 0.0
    np.testing.assert_allclose(combine_embeddings(s, h, mode).numpy(),
                               encoder_combination(s.numpy(), h.numpy(), mode), rtol=1e-6, atol=1e-7)


def test_loss_is_supervised_info_nce():
    premise, entailment, contradiction = torch.randn(4, 5), torch.randn(4, 5), torch.randn(4, 5)
    expected = info_nce(premise, entailment, contradiction.unsqueeze(1), temperature=0.05)
    torch.testing.assert_close(AMRRetrofitLoss()(premise, entailment, contradiction), expected)


def _token_ids(texts: list[str], vocabulary: dict[str, int], length: int = 12) -> dict[str, torch.Tensor]:
    """Whitespace tokens -> ids of a growing vocabulary, repeated/truncated to ``length``."""
    rows = []
    for text in texts:
        ids = [vocabulary.setdefault(token, len(vocabulary)) for token in text.split()]
        rows.append((ids * length)[:length])
    assert len(vocabulary) <= VOCAB
    return {"token_ids": torch.tensor(rows)}


def test_amr_encoder_trains_on_mixed_batches():
    concepts = [f"c{i}" for i in range(24)]
    triples = []
    for i in range(12):
        a, b, c = concepts[2 * i], concepts[2 * i + 1], concepts[(2 * i + 7) % 24]

        def slot(x, y, relation):
            graph = f"( p / {x} {relation} ( q / {y} ) )"
            return {"en": AMRVariant(f"{x} {y}", graph), "de": AMRVariant(f"{x}_de {y}_de", graph)}

        triples.append((slot(a, b, ":ARG0"), slot(b, a, ":ARG1"), slot(c, b, ":ARG0")))
    sampler = MixedTrainingSampler(["en", "de"], seed=3)
    vocabulary: dict[str, int] = {}
    evaluation_sampler = MixedTrainingSampler(["en", "de"], seed=9)
    evaluation_views = [
        _token_ids([item.content for item in evaluation_sampler.mix_batch([t[k] for t in triples])], vocabulary)
        for k in range(3)
    ]
    torch.manual_seed(0)
    model = TinyEncoder(dropout=0.1)
    objective = AMRRetrofitLoss(temperature=0.1)

    def evaluation_loss() -> float:
        model.eval()
        with torch.no_grad():
            loss = objective(*(model.encode(view) for view in evaluation_views)).item()
        model.train()
        return loss

    def step_loss():
        views = [
            _token_ids([item.content for item in sampler.mix_batch([t[k] for t in triples])], vocabulary)
            for k in range(3)
        ]
        return objective(*(model.encode(view) for view in views))

    before = evaluation_loss()
    train_losses(model.parameters(), step_loss, steps=40, lr=0.02)
    assert evaluation_loss() < 0.8 * before


def _authors_released_loss(premise, entailment, contradiction, temperature):
    """Independent float64 numpy transcription of MSE-AMR's cl_forward: cos over [entailments; contradictions] / τ,
    CE with labels 0..N-1, plus CE of the transposed premise-entailment block (entailment → premise), summed."""
    import numpy as np

    def unit(x):
        x = x.detach().numpy().astype(np.float64)
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    p, e, c = unit(premise), unit(entailment), unit(contradiction)
    scores = p @ np.concatenate([e, c]).T / temperature

    def cross_entropy(logits):
        top = logits.max(axis=1, keepdims=True)
        log_norm = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))
        return float(np.mean(log_norm - np.diag(logits[:, : len(logits)])))

    n = len(p)
    return cross_entropy(scores) + cross_entropy(scores[:n, :n].T.copy())


def test_reverse_direction_is_the_authors_released_loss():
    generator = torch.Generator().manual_seed(3)
    p, e, c = (torch.randn(8, 16, generator=generator, dtype=torch.float64) for _ in range(3))
    authors = _authors_released_loss(p, e, c, 0.05)
    released = AMRRetrofitLoss(0.05, reverse_direction=True)(p, e, c)
    assert released.item() == pytest.approx(authors, rel=1e-12)
    torch.testing.assert_close(released, 2 * info_nce(p, e, c[:, None], temperature=0.05, symmetric=True))
    paper = AMRRetrofitLoss(0.05)(p, e, c)  # default: the paper's equation, one direction
    torch.testing.assert_close(paper, info_nce(p, e, c[:, None], temperature=0.05))
    assert paper.item() != pytest.approx(authors, rel=1e-3)
    with pytest.raises(ValueError, match="reverse_direction"):
        AMRRetrofitLoss(reverse_direction="yes")
