"""The reflection model and its file format (standard library only, never the compiler)."""

from oneshader.reflection.errors import ReflectionFormatError
from oneshader.reflection.format import ReflectionFormat
from oneshader.reflection.model import *  # noqa: F403
from oneshader.reflection.model import __all__ as _model_all

__all__ = [*_model_all, "ReflectionFormat", "ReflectionFormatError"]
