"""Linearize an AMR graph into the token sequence of Cai et al. (2022), "Retrofitting Multilingual
Sentence Embeddings with Abstract Meaning Representation" (EMNLP 2022, §3).

The paper reads each graph depth-first in its PENMAN notation, as Konstas et al. (2017) and SPRING's
"DFS without pointers" (Bevilacqua et al. 2021) do, and removes what a sentence encoder should not
see: variable names, pointer tokens and Wikipedia links. Parentheses stay as depth markers unless
dropped. The rules implemented here, checked against the authors' released code
(github.com/jcyk/MSE-AMR, ``amr/IO.py``: ``read_raw_amr_data(..., dereify=True, remove_wiki=True,
use_pointer_tokens=True)``):

1. **Order.** The PENMAN tree is walked depth-first from the top node, exactly as written: branches
   in document order, each node expanded where it is written with its concept (``(b / boy)``).
   Nothing is reordered, inverted or normalized.
2. **Nodes.** A written node is ``( concept branch* )``: an opening parenthesis, its concept, its
   branches, a closing parenthesis. Leaves too: ``(b / boy)`` → ``( boy )``. Concepts are kept
   verbatim, frame senses included (``believe-01``).
3. **Re-entrancy.** A variable written as a branch target (``:ARG0 b``) is replaced by the bare
   concept of that variable — no parentheses, no branches (its subtree is not expanded again),
   no variable, no pointer token. This holds wherever the reference stands: after, before
   (``:ARG0 b … (b / boy)``) or inside the node's own definition (a cycle).
4. **Roles.** A branch is its role token exactly as written, then its target: ``:ARG0``, ``:op1``,
   inverse roles as one token (``:ARG0-of``), ``:domain`` and ``:mod-of`` each as written.
5. **Constants.** A quoted string loses its quotes and its underscores become spaces, as in the
   released code (``"Barack"`` → ``Barack``, ``"New_York"`` → ``New York``, ``"5:30"`` →
   ``5:30``); a string with spaces yields one token per word. Unquoted constants — numbers
   (``3``, ``10.5``), ``-`` of ``:polarity -``, ``+``, ``imperative``/``interrogative``/
   ``expressive`` — are emitted as written. An empty string ``""`` emits nothing.
6. **Wiki.** Every ``:wiki`` branch is removed with its target (``:wiki "Barack_Obama"`` and
   ``:wiki -`` alike).
7. **Alignments.** Surface alignment markers (``~e.3``) are stripped from concepts, roles,
   constants and variable references (the released code loses them when it rebuilds the graph).
8. **Depth markers.** With ``drop_parentheses=True`` every ``(`` and ``)`` token is removed (as
   the released code does) and nothing else changes.

Tokens are joined with single spaces. Example::

    (b / believe-01
       :ARG0 (p / person :wiki "Barack_Obama" :name (n / name :op1 "Barack" :op2 "Obama"))
       :ARG1 (w / want-01 :ARG0 p :ARG1 (g / go-02 :ARG0 p :polarity -)))
    → ( believe-01 :ARG0 ( person :name ( name :op1 Barack :op2 Obama ) ) :ARG1 ( want-01
        :ARG0 person :ARG1 ( go-02 :ARG0 person :polarity - ) ) )

**Where this deliberately differs from the released code** (each difference is an artifact of
that code's plumbing, not a linearization rule of the paper):

- *Re-layout.* The released ``_remove_wiki`` rebuilds every graph from its triples, which drops
  penman's layout markers, so ``penman.encode`` (``penman>=1.1.0``, unpinned) re-lays the tree
  out by its own heuristics before tokenizing. That expands a forward-referenced node at its first
  mention and can re-hang an edge from its other end as an inverse role: with penman 1.3,
  ``(s / see-01 :ARG0 (i / i) :ARG1 i)`` comes out ``( see-01 :ARG0 ( i :ARG1-of see-01 ) )``.
  We keep the graph as written (rule 1): it is what the released code emits when called without
  wiki removal, and the same as its output on every graph whose re-layout reproduces the written
  tree (typically: each node defined at its first mention, and no reference written right after
  the subtree that ends with the node it points to, as in the example above).
- *Sub-word splits.* Before joining, the released code splits tokens missing from its extended
  vocabulary: ``:ARG0-of`` → ``:ARG0 -of``, rare frames ``word-01`` → ``word -01``, unknown
  relations ``:foo`` → ``: foo``. That depends on a vocabulary file and is a tokenizer step; here
  roles and frames stay whole (see :mod:`interlingua.operators.amr.vocabulary` for the tokens to
  add to the encoder).
- *Strings with spaces.* The released tokenizer splits ``"War and Peace"`` at the spaces before
  removing quotes, so the quote marks stay glued to the first and last word; we remove the quotes
  of every string (``War and Peace``).

Input: a PENMAN string (or a ``penman.Tree``) that has passed
:func:`interlingua.operators.amr.validate.validate_penman`; what an invalid graph (a node without a
concept, a role without a target, …) linearizes to is unspecified. Output: the token list
(:func:`linearize_tokens`; no token is empty or contains a space) or the space-joined string
(:func:`linearize`). Text that is not PENMAN raises ``penman.DecodeError``.
"""

from __future__ import annotations

import re

import penman
from penman.tree import Tree

OPEN = "("
CLOSE = ")"
WIKI_ROLE = ":wiki"
_ALIGNMENT = re.compile(r"~[A-Za-z]*\.?\d+(?:,\d+)*$")


def _strip_alignment(token: str) -> str:
    return _ALIGNMENT.sub("", token)


def _constant_tokens(value: str) -> list[str]:
    """Tokens of a constant target: a string without quotes (``_`` → space), else as written."""
    value = _strip_alignment(value)
    if value.startswith('"'):
        closing = value.rfind('"')
        content = value[1:closing] if closing > 0 else value[1:]
        return content.replace("_", " ").split()
    return [value] if value else []


def _concepts(node: tuple, concepts: dict[str, str]) -> None:
    """Map every variable of the tree to its concept (alignment stripped)."""
    variable, branches = node
    for role, target in branches:
        if role == "/":
            if target is not None:
                concepts.setdefault(variable, _strip_alignment(str(target)))
        elif isinstance(target, tuple):
            _concepts(target, concepts)
    concepts.setdefault(variable, "")


def linearize_tokens(amr: str | Tree, *, drop_parentheses: bool = False) -> list[str]:
    """The token list of one AMR graph under the rules in the module docstring."""
    tree = penman.parse(amr) if isinstance(amr, str) else amr
    concepts: dict[str, str] = {}
    _concepts(tree.node, concepts)
    tokens: list[str] = []

    def emit(node: tuple) -> None:
        variable, branches = node
        tokens.append(OPEN)
        if concepts.get(variable):
            tokens.append(concepts[variable])
        for role, target in branches:
            if role == "/":
                continue
            role = _strip_alignment(role)
            if role == WIKI_ROLE:
                continue
            tokens.append(role)
            if isinstance(target, tuple):
                emit(target)
            elif target is None:
                continue
            else:
                reference = _strip_alignment(str(target))
                if reference in concepts:
                    if concepts[reference]:
                        tokens.append(concepts[reference])
                else:
                    tokens.extend(_constant_tokens(str(target)))
        tokens.append(CLOSE)

    emit(tree.node)
    if drop_parentheses:
        tokens = [t for t in tokens if t not in (OPEN, CLOSE)]
    return tokens


def linearize(amr: str | Tree, *, drop_parentheses: bool = False) -> str:
    """The linearized graph as one space-joined string (see :func:`linearize_tokens`)."""
    return " ".join(linearize_tokens(amr, drop_parentheses=drop_parentheses))
