"""The import rule (docs/architecture.md), read from the source with ``ast``: no import cycles in
``oneshader``, the parts depend one way, and the compiler's rooms import only the rooms before
them in the pipeline. ``test_seam.py`` checks the same line at run time (what a process loads)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
COMPILER = "oneshader.compiler"

# The compiler's rooms in pipeline order: each imports only rooms before it ("package" is
# oneshader/compiler/__init__.py, the public entry points the build calls). emitted/ comes first
# after api: besides its readers it holds the vocabulary of Slang's emitted names, which the
# rewrites that make those names (source/) and every later room share.
ROOMS = [
    "api",
    "emitted",
    "source",
    "quirks",
    "slang",
    "unify",
    "patch",
    "verify",
    "driver",
    "package",
]
ROOMS.append("process")
# Rooms held to less than "everything before": emitted/ reads code on its own, and verify/
# shares no code with the steps whose output it checks.
ONLY = {"emitted": {"api"}, "verify": {"api", "emitted"}}
BINDING = f"{COMPILER}.slang.capi"  # the ctypes binding to Slang
# What code outside the compiler (the build task) may import of it.
PUBLIC = (COMPILER, f"{COMPILER}.api", f"{COMPILER}.process.")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((SRC / "oneshader").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imports(name: str) -> Iterator[str]:
    """Every oneshader module ``name`` imports, wherever the import stands (a function's lazy
    import is a dependency too); ``from P import m`` counts as ``P.m`` when that is a module."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names
            ]
        else:
            continue
        yield from (t for t in targets if t in MODULES and t != name)


GRAPH = {name: sorted(set(_imports(name))) for name in MODULES}


def _room(module: str) -> str | None:
    if module == COMPILER:
        return "package"
    if not module.startswith(COMPILER + "."):
        return None
    return module.removeprefix(COMPILER + ".").split(".")[0]


def _cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for succ in graph.get(node, []):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_parser_sees_the_imports_it_must() -> None:
    """The rule below is only as good as the graph: known edges, lazy and relative ones too."""
    assert f"{COMPILER}.driver" in GRAPH[COMPILER]  # a lazy import inside compile_file
    assert f"{COMPILER}.source.rewrite" in GRAPH[f"{COMPILER}.source.sourceset"]  # from P import m
    assert f"{COMPILER}.process.worker_child" in GRAPH[f"{COMPILER}.process.zygote_child"]
    assert "oneshader.codegen.names" in GRAPH["oneshader.bindings.stages"]
    assert _cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]


def test_no_import_cycles_between_modules() -> None:
    assert _cycles(GRAPH) == []


def test_the_parts_depend_one_way() -> None:
    """reflection, compiler, buildtask, codegen, bindings, cli: no two depend on each other (the
    runtime bindings may use the generator's shared tables; the generator never the runtime)."""
    parts: dict[str, set[str]] = {}
    for module, deps in GRAPH.items():
        part = module.split(".")[1] if "." in module else module
        parts.setdefault(part, set()).update(d.split(".")[1] for d in deps if "." in d)
    graph = {part: sorted(deps - {part}) for part, deps in parts.items()}
    assert _cycles(graph) == []
    assert "codegen" in graph["bindings"] and "bindings" not in graph["codegen"]
    for part in ("reflection", "codegen", "bindings"):
        assert "compiler" not in graph[part] and "buildtask" not in graph[part], part


# The modules that still apply a regular expression to HLSL text (issue 20: the source model's
# lexer is the only one; none is left). A module that needs one again reads the token stream
# instead (source/query.py; docs/compiler.md "The source model").
LEXER = f"{COMPILER}.source.lexer"
REGEX_ON_HLSL_LEFT: set[str] = set()


def _imports_re(module: str) -> bool:
    tree = ast.parse(MODULES[module].read_text())
    return any(
        (isinstance(n, ast.Import) and any(a.name == "re" for a in n.names))
        or (isinstance(n, ast.ImportFrom) and n.module == "re")
        for n in ast.walk(tree)
    )


def test_only_the_lexer_reads_hlsl_with_regular_expressions_but_the_listed() -> None:
    """quirks/ reads the source model, never the text; source/ and slang/ (but its reader of
    Slang's messages) apply regular expressions to HLSL only where listed."""
    rooms = ("source", "quirks", "slang")
    reading = {
        m
        for m in MODULES
        if _room(m) in rooms and m != f"{COMPILER}.slang.messages" and _imports_re(m)
    }
    assert reading == REGEX_ON_HLSL_LEFT | {LEXER}
    assert not any(_room(m) == "quirks" for m in reading)


def test_every_compiler_module_has_a_room() -> None:
    rooms = {_room(m) for m in MODULES if _room(m) is not None}
    assert rooms == set(ROOMS)


@pytest.mark.parametrize("room", ROOMS)
def test_a_room_imports_only_rooms_before_it(room: str) -> None:
    allowed = ONLY.get(room, set(ROOMS[: ROOMS.index(room)]))
    bad = [
        f"{module} -> {dep}"
        for module, deps in GRAPH.items()
        if _room(module) == room
        for dep in deps
        if _room(dep) not in (None, room) and _room(dep) not in allowed
    ]
    assert bad == []


def test_only_slang_imports_the_binding() -> None:
    users = {m for m, deps in GRAPH.items() if BINDING in deps and _room(m) != "slang"}
    assert users == set()


def test_outside_the_compiler_only_its_public_modules_are_imported() -> None:
    bad = [
        f"{module} -> {dep}"
        for module, deps in GRAPH.items()
        if _room(module) is None
        for dep in deps
        if _room(dep) is not None and not (dep in PUBLIC or dep.startswith(PUBLIC[2]))
    ]
    assert bad == []


def test_only_the_build_and_prove_layouts_import_the_compiler() -> None:
    """``oneshader.prove`` (``oneshader prove-layouts``) builds probes through the compiler; the
    probes' planning and checking stay in the bindings, which never import it."""
    parts = {
        module.split(".")[1]
        for module, deps in GRAPH.items()
        if "." in module and _room(module) is None and any(_room(d) for d in deps)
    }
    assert "prove" in parts and parts <= {"buildtask", "prove", "cli"}, parts
    assert not any(_room(d) for d in GRAPH["oneshader.bindings.probe"])


def test_the_no_op_fast_path_imports_nothing_heavy() -> None:
    """``oneshader build`` with nothing to do answers from ``buildtask.noop`` before the CLI
    imports anything else: that module reads oneshader's version and, only when a build
    records, the atomic write of ``fsutil``; the CLI imports the rest only after it."""
    assert set(GRAPH["oneshader.buildtask.noop"]) <= {"oneshader", "oneshader.fsutil"}
    tree = ast.parse(MODULES["oneshader.cli"].read_text())
    top = [
        n
        for n in tree.body
        if isinstance(n, (ast.Import, ast.ImportFrom))
        and not (isinstance(n, ast.ImportFrom) and n.module == "__future__")
    ]
    names = [a.name for n in top for a in n.names]
    assert names == ["sys", "__version__"], names
