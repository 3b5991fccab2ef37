"""Reflection file format version 1: placeholder until the reader and writer land."""

from __future__ import annotations


class ReflectionFormat:
    pass
