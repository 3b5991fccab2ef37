"""Turning names from a reflection file (which may come from anywhere) into Python identifiers.

The rule, documented in docs/bindings.md, is deterministic and depends on nothing but its input
(the builtin list is frozen here, not read from the running interpreter):

1. every character that is not an ASCII letter, digit or underscore becomes ``_``;
2. an empty result, or one starting with a digit, gets a leading ``_``;
3. a result starting with two underscores or with ``_os`` gets a leading ``m`` (no dunder, no
   class-private name, nothing in the ``_os`` namespace generated code keeps for itself);
4. a keyword, soft keyword, builtin name or name the scope reserves gets a trailing ``_``
   (repeated until it is none of these);
5. a result longer than 60 characters keeps its first 51 and gets ``_`` and the first 8 hex
   digits of the SHA-256 of the original name (so every generated line stays short);
6. a name already given in the same scope gets ``_2``, ``_3``, ... (the first free one), in
   declaration order.

The runtime uses the same functions for numpy field names, so generated code and
``oneshader.bindings.load`` agree on every name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "MODULE_RESERVED",
    "STRUCT_RESERVED",
    "Scope",
    "identifier",
    "mangle_all",
    "stem_of",
]

KEYWORDS = frozenset(
    (
        "False",
        "None",
        "True",
        "and",
        "as",
        "assert",
        "async",
        "await",
        "break",
        "class",
        "continue",
        "def",
        "del",
        "elif",
        "else",
        "except",
        "finally",
        "for",
        "from",
        "global",
        "if",
        "import",
        "in",
        "is",
        "lambda",
        "nonlocal",
        "not",
        "or",
        "pass",
        "raise",
        "return",
        "try",
        "while",
        "with",
        "yield",
        "match",
        "case",
        "type",
    )
)

# The public names of Python 3.11-3.13's builtins module, frozen so output never depends on the
# interpreter that runs the generator.
BUILTINS = frozenset(
    (
        "ArithmeticError",
        "AssertionError",
        "AttributeError",
        "BaseException",
        "BaseExceptionGroup",
        "BlockingIOError",
        "BrokenPipeError",
        "BufferError",
        "BytesWarning",
        "ChildProcessError",
        "ConnectionAbortedError",
        "ConnectionError",
        "ConnectionRefusedError",
        "ConnectionResetError",
        "DeprecationWarning",
        "EOFError",
        "Ellipsis",
        "EncodingWarning",
        "EnvironmentError",
        "Exception",
        "ExceptionGroup",
        "FileExistsError",
        "FileNotFoundError",
        "FloatingPointError",
        "FutureWarning",
        "GeneratorExit",
        "IOError",
        "ImportError",
        "ImportWarning",
        "IndentationError",
        "IndexError",
        "InterruptedError",
        "IsADirectoryError",
        "KeyError",
        "KeyboardInterrupt",
        "LookupError",
        "MemoryError",
        "ModuleNotFoundError",
        "NameError",
        "NotADirectoryError",
        "NotImplemented",
        "NotImplementedError",
        "OSError",
        "OverflowError",
        "PendingDeprecationWarning",
        "PermissionError",
        "ProcessLookupError",
        "PythonFinalizationError",
        "RecursionError",
        "ReferenceError",
        "ResourceWarning",
        "RuntimeError",
        "RuntimeWarning",
        "StopAsyncIteration",
        "StopIteration",
        "SyntaxError",
        "SyntaxWarning",
        "SystemError",
        "SystemExit",
        "TabError",
        "TimeoutError",
        "TypeError",
        "UnboundLocalError",
        "UnicodeDecodeError",
        "UnicodeEncodeError",
        "UnicodeError",
        "UnicodeTranslateError",
        "UnicodeWarning",
        "UserWarning",
        "ValueError",
        "Warning",
        "ZeroDivisionError",
        "abs",
        "aiter",
        "all",
        "anext",
        "any",
        "ascii",
        "bin",
        "bool",
        "breakpoint",
        "bytearray",
        "bytes",
        "callable",
        "chr",
        "classmethod",
        "compile",
        "complex",
        "copyright",
        "credits",
        "delattr",
        "dict",
        "dir",
        "divmod",
        "enumerate",
        "eval",
        "exec",
        "exit",
        "filter",
        "float",
        "format",
        "frozenset",
        "getattr",
        "globals",
        "hasattr",
        "hash",
        "help",
        "hex",
        "id",
        "input",
        "int",
        "isinstance",
        "issubclass",
        "iter",
        "len",
        "license",
        "list",
        "locals",
        "map",
        "max",
        "memoryview",
        "min",
        "next",
        "object",
        "oct",
        "open",
        "ord",
        "pow",
        "print",
        "property",
        "quit",
        "range",
        "repr",
        "reversed",
        "round",
        "set",
        "setattr",
        "slice",
        "sorted",
        "staticmethod",
        "str",
        "sum",
        "super",
        "tuple",
        "vars",
        "zip",
    )
)

# Names a generated module or variant package defines itself (see codegen.render and
# codegen.variants), or imports; the rest it keeps in the ``_os`` namespace (rule 3).
MODULE_RESERVED = frozenset(
    (
        "annotations",
        "Any",
        "Final",
        "np",
        "_b",
        "_m",
        "SOURCE",
        "STALE",
        "STEM",
        "REFLECTION",
        "SHADER",
        "resources",
        "push_blocks",
        "spec_constants",
        "entries",
        "constants",
        "buffer_lengths",
        # a variant package's own names (codegen.variants): its __init__ binds the structs its
        # variants share beside them, so no struct class may take one, in any module
        "VARIANTS",
        "SHARED_STRUCTS",
        "DIFFERENT",
    )
)

# Attributes of bindings.runtime.Struct and StructArray; a test keeps this list complete.
STRUCT_RESERVED = frozenset(
    (
        "self",  # the first parameter of the generated constructor
        "byte_offset",
        "array",
        "bytes_view",
        "copy",
        "data",
        "dtype",
        "element",
        "fields",
        "from_bytes",
        "layout",
        "nbytes",
        "set",
        "shape",
        "size",
        "to_bytes",
        "zeros",
    )
)

_NOT_IDENT = re.compile(r"[^A-Za-z0-9_]")


MAX_LENGTH = 60


def identifier(name: str, reserved: Iterable[str] = ()) -> str:
    """Rules 1-5: one name, without regard to the other names of its scope."""
    out = _NOT_IDENT.sub("_", name)
    if not out or out[0].isdigit():
        out = "_" + out
    if out.startswith(("__", "_os")):
        out = "m" + out
    taken = frozenset(reserved)
    while out in KEYWORDS or out in BUILTINS or out in taken:
        out += "_"
    if len(out) > MAX_LENGTH:
        import hashlib  # only for long names: it costs milliseconds to import

        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
        out = f"{out[:51]}_{digest[:8]}"
    return out


class Scope:
    """Names given so far in one Python namespace (rule 5)."""

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        self.reserved = frozenset(reserved)
        self.given: set[str] = set()
        self._next: dict[str, int] = {}  # per base name, the first suffix not yet tried

    def add(self, name: str) -> str:
        """Linear in the names added: suffixes already taken for a base are not tried again
        (names are never given back, so the first free one lies past them)."""
        base = identifier(name, self.reserved)
        out = base
        n = self._next.get(base, 2)
        while out in self.given:  # rules 1-5 again: "_" + "_2" must not become a private name
            out = identifier(f"{base}_{n}", self.reserved)
            n += 1
        self._next[base] = n
        self.given.add(out)
        return out


def mangle_all(names: Iterable[str], reserved: Iterable[str] = ()) -> list[str]:
    """The identifiers for ``names`` declared in this order in one fresh scope."""
    scope = Scope(reserved)
    return [scope.add(n) for n in names]


def stem_of(path: str | os.PathLike[str]) -> str:
    """``ui/Sprite.reflection`` -> ``Sprite``: the name the built code files share."""
    name = Path(path).name
    suffix = ".reflection"
    return name[: -len(suffix)] if name.endswith(suffix) else Path(name).stem
