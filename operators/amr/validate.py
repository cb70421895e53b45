"""Validate one parser output as an AMR graph in PENMAN notation, with ``penman`` (Goodman 2020).

A seq2seq parser emits text; nothing guarantees that text is a graph. :func:`validate_penman`
decodes it and returns either the graph or a short reason, so the parse operator can keep every
failure in a rejects table instead of dropping it. The reason starts with a fixed category (the
part before ``:``) so rejects can be counted by kind:

- ``empty-output`` — nothing but whitespace;
- ``decode-error: <message>`` — not well-formed PENMAN: penman's own message (missing ``)``, a
  token where a role is expected, …), or ``unbalanced parentheses: extra ')' after the graph``,
  or ``text before the graph: <text>`` (``#`` metadata lines before the graph are allowed);
- ``multiple-graphs`` — more than one top-level graph in the output;
- ``trailing-text: <text>`` — anything but whitespace after the graph's last ``)``;
- ``missing-concept: <var>`` — a node without a concept, e.g. ``(a / )`` or ``(a :ARG0 …)``;
- ``invalid-concept: <concept>`` — a quoted string as concept (``(a / "boy")``);
- ``duplicate-variable: <var>`` — one variable given two concepts;
- ``missing-target: <role>`` — a role with nothing after it (``(a / b :ARG0)``, ``(a / b :)``),
  which penman only logs;
- ``undefined-variable: <name>`` — a role points at a symbol shaped like an AMR variable (a lowercase
  letter, then digits) that no node defines, when the symbol has digits (``x2``) or its letter begins one of the
  graph's own variables (``b3`` or ``b`` beside ``b2``); a bare letter that no variable of the graph starts with
  is a constant, as ``penman`` reads it (``(l / letter :value a)``, ``(a / and :li x)``);
- ``invalid-role: <role>`` — a role with an empty name (``(a / b : (c / d))``) always; with
  ``check_roles=True`` also a role the AMR model of ``penman`` does not know;
- ``too-deep: <depth>`` — nodes nested deeper than ``max_depth`` (default :data:`MAX_PENMAN_DEPTH`), measured
  before decoding (``penman`` and the linearizer recurse per level; real AMR graphs stay far below the limit).

``#`` comment lines are allowed before the graph and after it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import penman
from penman.graph import Graph

_VARIABLE_LIKE = re.compile(r"^[a-z][0-9]*$")

#: Deepest node nesting accepted; deeper outputs are rejects (``too-deep``), never a ``RecursionError``.
MAX_PENMAN_DEPTH = 100


@dataclass(frozen=True)
class Validation:
    """Outcome of validating one output: ``graph`` when valid, else ``reason`` (non-empty)."""

    graph: Graph | None
    reason: str

    @property
    def ok(self) -> bool:
        return self.graph is not None


def _decode_error_message(error: penman.DecodeError) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__


def _skip_blank_and_comments(text: str, i: int) -> int:
    """Index of the first character at or after ``i`` that is neither whitespace nor a ``#`` comment."""
    while i < len(text):
        if text[i].isspace():
            i += 1
        elif text[i] == "#":
            newline = text.find("\n", i)
            i = len(text) if newline < 0 else newline + 1
        else:
            break
    return i


def _graph_span_problem(text: str) -> str:
    """A reason when non-comment text stands before the first graph or after its closing parenthesis."""
    start = _skip_blank_and_comments(text, 0)
    if start < len(text) and text[start] != "(":
        end = text.find("(", start)
        return f"decode-error: text before the graph: {text[start:end if end >= 0 else None].strip()[:40]!r}"
    for i, depth in _parentheses(text, start):
        if depth == 0:
            break
    else:
        i = len(text)
    rest = _skip_blank_and_comments(text, i + 1)
    if rest >= len(text):
        return ""
    if text[rest] == ")":
        return "decode-error: unbalanced parentheses: extra ')' after the graph"
    if text[rest] == "(":
        return "multiple-graphs"
    return f"trailing-text: {text[rest:].strip()[:40]!r}"


def _without_trailing_comments(text: str) -> str:
    """``text`` cut after its last top-level ``)`` when only whitespace and ``#`` comments follow (``penman.iterdecode``
    takes a trailing comment for the metadata of a graph that never comes: "Unexpected end of input")."""
    closes = [i for i, depth in _parentheses(text) if depth == 0]
    if closes and _skip_blank_and_comments(text, closes[-1] + 1) >= len(text):
        return text[:closes[-1] + 1]
    return text


def _parentheses(text: str, start: int = 0):
    """``(index, depth after it)`` for every ``(`` and ``)`` from ``start`` on, outside quoted strings and outside
    ``#`` comments between graphs."""
    depth = 0
    in_string = escaped = in_comment = False
    for i in range(start, len(text)):
        char = text[i]
        if in_comment:
            in_comment = char != "\n"
        elif in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "#" and depth == 0:
            in_comment = True
        elif char in "()":
            depth += 1 if char == "(" else -1
            yield i, depth


def nesting_depth(text: str) -> int:
    """The deepest ``(`` nesting of ``text``, ignoring parentheses inside quoted strings and ``#`` comments."""
    return max((depth for _, depth in _parentheses(text)), default=0)


def _structural_problem(graph: Graph) -> str:
    concepts: dict[str, list[object]] = {}
    for variable, _, concept in graph.instances():
        concepts.setdefault(variable, []).append(concept)
    for variable, values in concepts.items():
        if any(value is None or value == "" for value in values):
            return f"missing-concept: {variable if variable is not None else '(empty node)'}"
        quoted = [value for value in values if isinstance(value, str) and value.startswith('"')]
        if quoted:
            return f"invalid-concept: {quoted[0]}"
        if len(values) > 1:
            return f"duplicate-variable: {variable}"
    for _, role, target in graph.edges() + graph.attributes():
        if target is None:
            return f"missing-target: {role}"
        if role == ":":
            return "invalid-role: :"
    letters = {variable[0] for variable in concepts if isinstance(variable, str) and variable}
    for _, _, target in graph.attributes():
        if _undefined_variable(target, concepts, letters):
            return f"undefined-variable: {target}"
    return ""


def _undefined_variable(target: object, variables: dict, letters: set[str]) -> bool:
    """Whether an attribute's value reads as a reference to a variable the graph never defined (module docstring)."""
    if not isinstance(target, str) or target in variables or not _VARIABLE_LIKE.match(target):
        return False
    return len(target) > 1 or target in letters


def _role_problem(graph: Graph) -> str:
    from penman.models.amr import model as amr_model

    for triple in graph.edges() + graph.attributes():
        if not amr_model.has_role(triple.role):
            return f"invalid-role: {triple.role}"
    return ""


def validate_penman(text: str, *, check_roles: bool = False, max_depth: int = MAX_PENMAN_DEPTH) -> Validation:
    """Decode ``text`` and check it is one well-formed AMR graph (see the module docstring)."""
    if not isinstance(text, str) or not text.strip():
        return Validation(None, "empty-output")
    depth = nesting_depth(text)
    if depth > max_depth:
        return Validation(None, f"too-deep: nesting depth {depth} > {max_depth}")
    try:
        graphs = list(penman.iterdecode(_without_trailing_comments(text)))
    except penman.DecodeError as error:
        return Validation(None, f"decode-error: {_decode_error_message(error)}")
    except RecursionError:  # a limit above what the interpreter's stack allows
        return Validation(None, f"too-deep: nesting depth {depth} exceeds the interpreter's recursion limit")
    span_problem = _graph_span_problem(text)
    if span_problem.startswith("decode-error: text before"):
        return Validation(None, span_problem)
    if not graphs:
        return Validation(None, "decode-error: no graph found")
    if len(graphs) > 1:
        return Validation(None, "multiple-graphs")
    if span_problem:
        return Validation(None, span_problem)
    graph = graphs[0]
    problem = _structural_problem(graph) or (_role_problem(graph) if check_roles else "")
    if problem:
        return Validation(None, problem)
    return Validation(graph, "")


def reason_category(reason: str) -> str:
    """The fixed category of a reason (``decode-error: …`` → ``decode-error``)."""
    return reason.split(":", 1)[0]


def count_reasons(reasons: list[str]) -> dict[str, int]:
    """Counts of non-empty reasons by category."""
    return dict(Counter(reason_category(r) for r in reasons if r))
