"""The reflection model as JSON, for tools in other languages (``oneshader reflection show
--json``); docs/reflection-format.md documents the schema.

The JSON mirrors the model one to one, so that it cannot drift from it: every dataclass becomes
an object with its fields (Python's names), a tuple a list, an enum the token the reflection
file uses for it, the feature flags a list of flag names, and None ``null``. Standard library only.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

from oneshader.reflection.format import _token
from oneshader.reflection.model import DeviceFeatures, ShaderReflection

__all__ = ["JSON_FORMAT", "JSON_VERSION", "to_json", "to_json_text"]

JSON_FORMAT = "oneshader-reflection-json"
JSON_VERSION = 1


def _value(value: Any) -> Any:
    """One model value as JSON data (type trees are at most 32 deep once validated)."""
    if isinstance(value, DeviceFeatures):
        return [f.name for f in DeviceFeatures if f in value]
    if isinstance(value, enum.Enum):
        return _token(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_value(v) for v in value]
    return value


def to_json(model: ShaderReflection) -> dict[str, Any]:
    """``{"format": ..., "version": 1, "shader": {the model}}``."""
    return {"format": JSON_FORMAT, "version": JSON_VERSION, "shader": _value(model)}


def to_json_text(model: ShaderReflection) -> str:
    """Deterministic text: keys in the model's order, two-space indents, a final newline."""
    return json.dumps(to_json(model), indent=2, ensure_ascii=False) + "\n"
