"""The call graph of emitted WGSL: the code an entry point reaches (what it uses).

Phase 2 of issue 14 merges it with the reachability walk in :mod:`.wgsl`."""

from __future__ import annotations

import re


def wgsl_functions(text: str) -> dict[str, str]:
    """WGSL function name -> body text (brace-matched)."""
    out: dict[str, str] = {}
    for m in re.finditer(r"\bfn\s+(\w+)\s*\(", text):
        start = text.find("{", m.end())
        if start < 0:
            continue
        depth, i = 0, start
        while i < len(text):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        out[m.group(1)] = text[start : i + 1]
    return out


def wgsl_reachable(text: str, entry: str) -> str:
    """The bodies of an entry point's function and of everything it calls, transitively."""
    functions = wgsl_functions(text)
    seen, todo, bodies = set(), [entry], []
    while todo:
        name = todo.pop()
        if name in seen or name not in functions:
            continue
        seen.add(name)
        body = functions[name]
        bodies.append(body)
        todo.extend(n for n in re.findall(r"\b(\w+)\s*\(", body) if n in functions)
    return "\n".join(bodies)
