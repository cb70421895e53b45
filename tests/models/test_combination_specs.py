"""``MODE(A|B)`` specs: exactly two parts at the top level, each possibly a combination itself."""

import pytest

from interlingua.models.resolve import resolve_encoder, single_specs, split_combination


@pytest.mark.parametrize("spec, count", [("concat(wordvec:vec.txt)", 1), ("concat(A|B|C)", 3),
                                         ("norm_sum(concat(A|B)|C|D)", 3)])
def test_a_combination_without_two_parts_is_refused_in_one_line(spec, count):
    mode = spec.split("(")[0]
    with pytest.raises(ValueError, match=rf"^{mode}\(A\|B\) takes exactly two encoder specs, got {count} in "):
        resolve_encoder(spec)


def test_a_combination_may_nest_in_either_part():
    assert split_combination("concat(concat(A|B)|C)") == ("concat", "concat(A|B)", "C")
    assert single_specs("sum(A|norm_concat(B|C))") == ["A", "B", "C"]


def test_a_name_with_one_parenthesised_part_and_no_mode_stays_a_single_spec():
    assert split_combination("runs/model(1)") is None and split_combination("model(1)") is None
    with pytest.raises(ValueError, match="combination mode 'foo'"):
        split_combination("foo(a|b)")


def test_a_part_with_a_parenthesis_that_pairs_with_none_is_split_at_the_bar():
    """A folder named ``a(b`` inside ``concat(...)``: the count of parentheses never came back to zero, so the spec
    read as one part and was refused; such parentheses nest nothing (as before ae49b38)."""
    from interlingua.models.resolve import split_combination

    assert split_combination("concat(/m/a(b|/m/c)") == ("concat", "/m/a(b", "/m/c")
    assert split_combination("concat(/m/a)b|/m/c)") == ("concat", "/m/a)b", "/m/c")
    assert split_combination("concat(concat(A|B)|C)") == ("concat", "concat(A|B)", "C")
