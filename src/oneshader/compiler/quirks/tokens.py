"""Queries on a file's tokens as compiled (the source model's token stream), for the triggers of
quirk records: no regular expression reads the source here."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

from oneshader.compiler.source.lexer import Token
from oneshader.compiler.source.query import Stream, is_word

Trigger = Callable[[Stream], tuple[Token, str] | None]


def word_in(words: Collection[str]) -> Trigger:
    """The first identifier that is one of ``words``."""
    chosen = frozenset(words)

    def find(s: Stream) -> tuple[Token, str] | None:
        i = next(s.words(chosen), None)  # (the stream's index of its identifiers)
        return None if i is None else (s.tokens[i], s.tokens[i].text)

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
    # The parts of only identifiers (only an identifier's text is one: a number's starts with a
    # digit, a literal with its quote, a punctuator is not a word), which the stream's index of
    # its identifiers finds: a stream without a word of each of those compared as written has
    # no run (most files: one look-up a part). The first is where runs are looked for from;
    # compared without case, only words of 4 letters or more (no single character's capital is
    # 4 long): else every position is tried.
    words = [
        k
        for k, p in enumerate(wanted)
        if all(is_word(w) and not w[0].isdigit() for w in p)
        and not (folded and k == n - 1 and min(map(len, p)) < 4)
    ]
    anchor = words[0] if words else None
    needed = [wanted[k] for k in words if not (folded and k == n - 1)]

    def starts(s: Stream) -> Iterable[int]:
        if anchor is None:
            return range(len(s) - n + 1)
        if folded and anchor == n - 1:
            found = s.words_where(lambda w: w.upper() in wanted[anchor])
        else:
            found = s.words(wanted[anchor])
        return (i - anchor for i in found if anchor <= i <= len(s) - n + anchor)

    def find(s: Stream) -> tuple[Token, str] | None:
        if not all(map(s.any_word, needed)):
            return None
        tokens = s.tokens
        for i in starts(s):
            if all(matches(tokens[i + k], wanted[k], k == n - 1) for k in range(n)):
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
