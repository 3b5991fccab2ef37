"""docs/compiler.md's list of source rewrites, its table of constructs a target lacks and its
table of the warnings a shared request may give, made from the registry (``python -m
oneshader.compiler.quirks.docs docs/compiler.md`` writes them in; tests/compiler/test_quirks.py
fails when the file and the records differ)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from oneshader.compiler.api import TARGET_NAMES
from oneshader.compiler.quirks.refusals import REFUSALS
from oneshader.compiler.quirks.rewrites import REWRITES
from oneshader.compiler.quirks.shared import SHARED_WARNINGS
from oneshader.reflection.model import Target


def _targets(targets: frozenset[Target]) -> str:
    return ", ".join(TARGET_NAMES[t] for t in Target if t in targets)


def rewrites_markdown() -> str:
    """One bullet per rewrite record, in the order the loop applies them, with its id."""
    out = []
    for r in REWRITES:
        text = f"`{r.id}` ({_targets(r.targets)}): {r.doc}"
        out.append(textwrap.fill(text, 100, initial_indent="- ", subsequent_indent="  "))
    return "\n".join(out)


def refusals_markdown() -> str:
    """One table row per refusal record."""
    rows = ["| record | target | refused (OS1003, at the first token that asks for it) |"]
    rows.append("|---|---|---|")
    rows += [f"| `{r.id}` | {_targets(r.targets)} | {r.doc} |" for r in REFUSALS]
    return "\n".join(rows)


def shared_markdown() -> str:
    """One table row per warning a shared request may give, and the targets given it."""
    rows = ["| code | Slang's warning | where Slang emits it | given to |", "|---|---|---|---|"]
    for w in SHARED_WARNINGS:
        given = TARGET_NAMES[w.only] if w.only else "every target"
        rows.append(f"| {w.code} | {w.name} | {w.emitted} | {given} |")
    return "\n".join(rows)


BLOCKS = {
    "rewrites": rewrites_markdown,
    "refusals": refusals_markdown,
    "shared warnings": shared_markdown,
}


def _markers(name: str) -> tuple[str, str]:
    return (
        f"<!-- generated from compiler/quirks ({name}): edit the records, then run "
        "python -m oneshader.compiler.quirks.docs docs/compiler.md -->",
        f"<!-- end of generated {name} -->",
    )


def updated(text: str) -> str:
    """``text`` with each generated block made again from the records."""
    for name, make in BLOCKS.items():
        start, end = _markers(name)
        before, found, rest = text.partition(start)
        if not found:
            raise ValueError(f"no '{start}' in the document")
        _, found, after = rest.partition(end)
        if not found:
            raise ValueError(f"no '{end}' in the document")
        text = f"{before}{start}\n{make()}\n{end}{after}"
    return text


def main(argv: list[str]) -> int:
    for name in argv:
        path = Path(name)
        path.write_text(updated(path.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
