"""Linearize an AMR graph into the token sequence of Cai et al. (2022), "Retrofitting Multilingual
Sentence Embeddings with Abstract Meaning Representation" (EMNLP 2022, §3).

The paper reads each graph in the depth-first order of its PENMAN notation (the convention of
Konstas et al. 2017 and of SPRING, Bevilacqua et al. 2021) and then removes what a sentence encoder
should not see: variable names, pointer tokens and Wikipedia links. The exact rules implemented
here:

1. **Order.** Depth-first from the graph's top node. A node's outgoing branches are emitted in the
   order they are written in the PENMAN string (``:ARG0`` before ``:ARG1`` only if written so).
   A node is *expanded* (concept plus all its branches) the first time the traversal reaches it;
   in a normally written graph that is where its variable is defined.
2. **Nodes.** An expanded node is ``( concept branch* )``: an opening parenthesis, its concept,
   its branches, a closing parenthesis. This holds for leaves too: ``(b / boy)`` becomes
   ``( boy )``. Concepts are kept verbatim, frame senses included (``believe-01``).
3. **Re-entrancy.** Every later occurrence of an already-visited node (a re-entrant variable, or
   a cycle back to an ancestor) is replaced by its bare concept, with no parentheses and no
   branches: no variables and no pointer tokens (SPRING's ``<pointer:N>``) are emitted.
4. **Roles.** A branch is its role as written, then its target: ``:ARG0``, ``:op1``, inverse roles
   kept as one token (``:ARG0-of``). Roles are not normalized or inverted.
5. **Constants.** A quoted string constant loses its quotes and keeps its content verbatim
   (``"Australia"`` → ``Australia``); other constants (numbers, ``-`` of ``:polarity -``, ``+``,
   ``imperative``, …) are emitted as written.
6. **Wiki.** Every ``:wiki`` branch is removed with its target (``:wiki "Barack_Obama"`` and
   ``:wiki -`` alike).
7. **Alignments.** Surface alignment markers (``~e.3``) are stripped from concepts and constants.
8. **Depth markers.** With ``drop_parentheses=True`` every ``(`` and ``)`` token is removed and the
   rest is unchanged.

Tokens are joined with single spaces. Example::

    (w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b :polarity -))
    → ( want-01 :ARG0 ( boy ) :ARG1 ( go-02 :ARG0 boy :polarity - ) )

Input: a PENMAN string (or a ``penman.Tree``). Output: the token list (:func:`linearize_tokens`) or
the space-joined string (:func:`linearize`). Invalid PENMAN raises ``penman.DecodeError`` — call
:func:`interlingua.operators.amr.validate.validate_penman` first to turn that into a reject.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import penman
from penman.tree import Tree

OPEN = "("
CLOSE = ")"
WIKI_ROLE = ":wiki"
_ALIGNMENT = re.compile(r"~[A-Za-z]*\.?\d+(?:,\d+)*$")


@dataclass
class _Node:
    concept: str
    branches: list[tuple[str, object]] = field(default_factory=list)


def _strip_alignment(token: str) -> str:
    return _ALIGNMENT.sub("", token)


def _constant_token(value: str) -> str:
    value = _strip_alignment(value) if not value.startswith('"') else value
    if len(value) >= 2 and value.startswith('"'):
        closing = value.rfind('"')
        return value[1:closing] if closing > 0 else value[1:]
    return value


def _collect_nodes(tree: Tree) -> dict[str, _Node]:
    """Map every variable to its concept and all the branches written under it, wherever written."""
    nodes: dict[str, _Node] = {}

    def visit(node: tuple) -> None:
        variable, branches = node
        entry = nodes.setdefault(variable, _Node(concept=""))
        for role, target in branches:
            if role == "/":
                entry.concept = _constant_token(str(target)) if target is not None else ""
            elif isinstance(target, tuple):
                entry.branches.append((role, target[0]))
                visit(target)
            else:
                entry.branches.append((role, target))

    visit(tree.node)
    return nodes


def linearize_tokens(amr: str | Tree, *, drop_parentheses: bool = False) -> list[str]:
    """The token list of one AMR graph under the rules in the module docstring."""
    tree = penman.parse(amr) if isinstance(amr, str) else amr
    nodes = _collect_nodes(tree)
    tokens: list[str] = []
    visited: set[str] = set()

    def emit(variable: str) -> None:
        node = nodes[variable]
        if variable in visited:
            tokens.append(node.concept)
            return
        visited.add(variable)
        tokens.append(OPEN)
        tokens.append(node.concept)
        for role, target in node.branches:
            if role == WIKI_ROLE:
                continue
            tokens.append(role)
            if isinstance(target, str) and target in nodes:
                emit(target)
            else:
                tokens.append(_constant_token(str(target)))
        tokens.append(CLOSE)

    emit(tree.node[0])
    if drop_parentheses:
        tokens = [t for t in tokens if t not in (OPEN, CLOSE)]
    return tokens


def linearize(amr: str | Tree, *, drop_parentheses: bool = False) -> str:
    """The linearized graph as one space-joined string (see :func:`linearize_tokens`)."""
    return " ".join(linearize_tokens(amr, drop_parentheses=drop_parentheses))
