"""Regional compilation: which modules ``compile_encoder_blocks`` compiles."""

from torch import nn

from interlingua.trainers.engine.compile_encoder import compile_encoder_blocks, repeated_blocks


class _Block(nn.Linear):
    pass


class _Stack(nn.Module):
    def __init__(self, layers: int):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.heads = nn.ModuleList([nn.Linear(4, 4), nn.ReLU()])  # mixed classes: not a layer stack
        self.encoder = nn.Module()
        self.encoder.layer = nn.ModuleList([_Block(4, 4) for _ in range(layers)])
        self.pair = nn.ModuleList([_Block(4, 4), _Block(4, 4)])  # a shorter uniform list


def test_the_layer_stack_is_the_longest_uniform_module_list():
    model = _Stack(3)
    assert repeated_blocks(model) == list(model.encoder.layer)
    assert repeated_blocks(nn.Sequential(nn.Linear(2, 2))) == []


def test_each_layer_is_compiled_in_place_and_the_rest_stays_eager():
    model = _Stack(3)
    keys = list(model.state_dict())
    assert compile_encoder_blocks(model) == "3 x _Block"
    assert all(layer._compiled_call_impl is not None for layer in model.encoder.layer)
    assert model._compiled_call_impl is None and model.embed._compiled_call_impl is None
    assert all(layer._compiled_call_impl is None for layer in model.pair)
    assert list(model.state_dict()) == keys


def test_a_model_without_a_layer_stack_is_compiled_whole():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    assert compile_encoder_blocks(model) == "whole model"
    assert model._compiled_call_impl is not None


def test_the_blocks_are_compiled_with_the_autotuned_split_size_and_eager_random_where_torch_has_them(monkeypatch):
    import types

    from interlingua.trainers.engine import compile_encoder

    shipped = {compile_encoder.AUTOTUNED_SPLIT: True, "fallback_random": True}
    assert compile_encoder.inductor_options() == shipped  # the pinned torch has both
    seen = []
    monkeypatch.setattr(nn.Module, "compile", lambda self, **kwargs: seen.append(kwargs))
    compile_encoder_blocks(_Stack(2))
    assert seen == [{"options": shipped}] * 2
    # an older torch without an option: compiled without it rather than refused
    older = types.SimpleNamespace(triton=types.SimpleNamespace(mix_order_reduction=True), fallback_random=False)
    assert compile_encoder.inductor_options(older) == {"fallback_random": True}
    assert compile_encoder.inductor_options(types.SimpleNamespace()) == {}
