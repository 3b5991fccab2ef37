"""Queries on a file's tokens as compiled (the source model's token stream), for the triggers of
quirk records: no regular expression reads the source here."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from oneshader.compiler.source.lexer import Token

Trigger = Callable[[Sequence[Token]], tuple[Token, str] | None]


def word_in(words: Collection[str]) -> Trigger:
    """The first identifier that is one of ``words``."""
    chosen = frozenset(words)

    def find(tokens: Sequence[Token]) -> tuple[Token, str] | None:
        return next(((t, t.text) for t in tokens if t.kind == "id" and t.text in chosen), None)

    return find


def sequence(*parts: Collection[str], folded: bool = False) -> Trigger:
    """The first run of tokens whose texts are one of ``parts[0]``, then ``parts[1]``...
    (``folded``: the last part compared without case), spelled as written without spaces."""

    def matches(t: Token, choices: Collection[str], last: bool) -> bool:
        return (t.text.upper() in choices) if folded and last else t.text in choices

    wanted = [frozenset(p) for p in parts[:-1]] + [
        frozenset(x.upper() for x in parts[-1]) if folded else frozenset(parts[-1])
    ]

    n = len(wanted)
    first, fold_first = wanted[0], folded and n == 1

    def find(tokens: Sequence[Token]) -> tuple[Token, str] | None:
        for i in range(len(tokens) - n + 1):
            text = tokens[i].text
            if (text.upper() if fold_first else text) not in first:
                continue  # most tokens: one look-up, not a generator per position
            if all(matches(tokens[i + k], wanted[k], k == n - 1) for k in range(1, n)):
                return tokens[i], "".join(t.text for t in tokens[i : i + n])
        return None

    return find


def variants(*bases: str, vectors: bool = True, matrices: bool = False) -> set[str]:
    """Each of ``bases`` and its vectors ``base1``..``base4`` (and matrices ``baseRxC``)."""
    out = set(bases)
    for b in bases:
        if vectors:
            out |= {f"{b}{n}" for n in "1234"}
        if matrices:
            out |= {f"{b}{r}x{c}" for r in "1234" for c in "1234"}
    return out
