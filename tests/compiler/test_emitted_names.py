"""The vocabulary of Slang's emitted names (``emitted.common``), which the rewrites, the patches,
the reflection and the verifier share: a source name as emitted, the counter companion, and a
default literal's bits."""

from __future__ import annotations

import re

from oneshader.compiler.emitted.common import (
    counter_name,
    demangle,
    emitted_name,
    emitted_pattern,
    literal_bits,
    resource_name,
)


def test_a_name_as_slang_emits_it() -> None:
    pattern = re.compile(rf"\b{emitted_pattern('Frame.x')}\b")
    assert pattern.fullmatch("Frame.x") and pattern.fullmatch("Frame.x_12")
    assert not pattern.fullmatch("FrameAx") and not pattern.search("Frame.x_1_2")
    assert demangle("Frame_0") == "Frame"


def test_the_counter_companion_and_the_globals_block() -> None:
    assert counter_name("Items") == "Items_counter"
    assert resource_name("globalParams_0") == "$Globals" and emitted_name("$Globals") == (
        "globalParams"
    )


def test_literal_bits() -> None:
    assert literal_bits("1.5f", True, "fFhH", "uU") == 0x3FC00000
    assert literal_bits("0x10u", False, "fFhH", "uU") == 16
    assert literal_bits("-1", False, "", "") == 0xFFFFFFFF
    assert literal_bits("true", False, "", "") == 1
    assert literal_bits("pi", True, "f", "") is None
