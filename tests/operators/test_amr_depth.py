"""PENMAN nesting beyond the depth limit is a counted reject, never an uncaught RecursionError."""

from interlingua.operators.amr.validate import MAX_PENMAN_DEPTH, count_reasons, nesting_depth, validate_penman


def nested(depth: int) -> str:
    return "(a / b " + "".join(f":c (x{i} / y " for i in range(depth - 1)) + ")" * depth


def test_depth_is_measured_outside_strings_and_comments():
    assert nesting_depth(nested(7)) == 7
    assert nesting_depth('# ::snt ((((\n(a / b :name (n / name :op1 "((("))') == 2


def test_deep_outputs_are_counted_rejects_not_crashes():
    outputs = [nested(MAX_PENMAN_DEPTH), nested(MAX_PENMAN_DEPTH + 1), nested(500), nested(5000)]
    results = [validate_penman(text) for text in outputs]
    assert results[0].ok
    assert [r.reason for r in results[1:]] == [f"too-deep: nesting depth {d} > {MAX_PENMAN_DEPTH}"
                                                for d in (MAX_PENMAN_DEPTH + 1, 500, 5000)]
    assert count_reasons([r.reason for r in results]) == {"too-deep": 3}
    assert validate_penman(nested(30), max_depth=10).reason == "too-deep: nesting depth 30 > 10"
