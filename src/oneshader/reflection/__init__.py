"""The reflection model and its file format (standard library only, never the compiler).

Generated bindings import only the model; the format reader costs more to import than the model
itself (its compiled expressions and tables), so ``ReflectionFormat`` and
``ReflectionFormatError`` are loaded on first access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oneshader.reflection.model import *  # noqa: F403
from oneshader.reflection.model import __all__ as _model_all

if TYPE_CHECKING:
    from oneshader.reflection.errors import ReflectionFormatError
    from oneshader.reflection.format import ReflectionFormat

__all__ = [*_model_all, "ReflectionFormat", "ReflectionFormatError"]


def __getattr__(name: str) -> Any:
    if name == "ReflectionFormat":
        from oneshader.reflection.format import ReflectionFormat

        return ReflectionFormat
    if name == "ReflectionFormatError":
        from oneshader.reflection.errors import ReflectionFormatError

        return ReflectionFormatError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
