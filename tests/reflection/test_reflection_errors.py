"""Every rejection of the issue, each with its exact line, column and message."""

from __future__ import annotations

from pathlib import Path

import pytest

from oneshader.reflection import ReflectionFormatError
from oneshader.reflection.format import ReflectionFormat

GOLDEN = (Path(__file__).parent / "golden" / "sprite.reflection").read_text(encoding="utf-8")
LINES = GOLDEN.split("\n")[:-1]
RESOURCE = LINES[3]  # resource name="Frame" kind=ConstantBuffer count=1 ...
ENTRY = LINES[13]  # entry name="VSMain" ...
SPEC = 'spec name="S" id=0 scalar=Int default=0'


def replace(index: int, new: str | list[str]) -> str:
    """The golden text with line ``index`` (0-based) replaced by ``new`` (one or more lines)."""
    lines = list(LINES)
    lines[index : index + 1] = [new] if isinstance(new, str) else new
    return "\n".join(lines) + "\n"


def col(line: str, needle: str) -> int:
    return line.index(needle) + 1


CASES = [
    # (id, text, line, column, message fragment)
    ("bom", "\ufeff" + GOLDEN, 1, 1, "byte-order mark"),
    ("version", replace(0, "oneshader-reflection 2"), 1, 22, "unsupported version '2'"),
    ("header", replace(0, "oneshader-reflect 1"), 1, 1, "expected the header"),
    ("empty file", "", 1, 1, "expected the header"),
    ("cr", GOLDEN.replace("\n", "\r\n"), 1, 23, "carriage return"),
    ("cr later", replace(2, LINES[2] + "\r"), 3, len(LINES[2]) + 1, "carriage return"),
    ("tab indent", replace(4, "\t" + LINES[4].lstrip()), 5, 1, "tab in the indentation"),
    ("tab between", replace(2, LINES[2].replace(" ", "\t")), 3, 8, "tab character"),
    ("tab in string", replace(1, 'source name="a\tb"'), 2, 15, "raw tab in a string"),
    ("control char", replace(1, 'source name="a\x01"'), 2, 15, "control character U+0001"),
    ("odd indent", replace(4, " " + LINES[4]), 5, 4, "3 spaces is not a multiple of two"),
    ("jump", replace(4, "  " + LINES[4]), 5, 5, "jumps from level 0 to level 2"),
    ("jump first", replace(1, "  " + LINES[1]), 2, 3, "expected at most level 0"),
    ("bad escape", replace(1, 'source name="a\\qb"'), 2, 15, "bad escape '\\q'"),
    ("bad u escape", replace(1, 'source name="\\u12g4"'), 2, 14, "four hex digits"),
    ("surrogate", replace(1, 'source name="\\ud800"'), 2, 14, "surrogate"),
    ("unterminated", replace(1, 'source name="abc'), 2, 13, "unterminated string"),
    ("column counts characters", replace(1, 'source name="ä€😀\\q"'), 2, 17, "bad escape"),
    ("after quote", replace(1, 'source name="a"b'), 2, 16, "after the closing quote"),
    ("quote in bare", replace(1, 'source name=a"b"'), 2, 14, "inside a bare value"),
    ("backslash in bare", replace(1, "source name=a\\b"), 2, 14, "backslash in a bare value"),
    ("no value", replace(1, "source name="), 2, 13, "expected a value after 'name='"),
    ("no equals", replace(1, "source name"), 2, 12, "expected '=' after the attribute name"),
    ("bad keyword", replace(1, '#source name="x"'), 2, 1, "expected a record keyword"),
    ("empty line", replace(2, [LINES[2], ""]), 4, 1, "empty line"),
    ("trailing space", replace(2, LINES[2] + " "), 3, len(LINES[2]) + 1, "trailing space"),
    ("two spaces", replace(2, "targets  list=SpirV"), 3, 9, "two spaces"),
    ("missing newline", GOLDEN[:-1], 17, len(LINES[16]) + 1, "missing newline"),
    ("negative", replace(3, RESOURCE.replace("count=1", "count=-1")), 4,
     col(RESOURCE, "count=") + 6, "negative numbers are not allowed"),
    ("signed", replace(3, RESOURCE.replace("count=1", "count=+1")), 4,
     col(RESOURCE, "count=") + 6, "without a sign"),
    ("fraction", replace(3, RESOURCE.replace("count=1", "count=1.5")), 4,
     col(RESOURCE, "count=") + 6, "found '1.5'"),
    ("hex", replace(3, RESOURCE.replace("count=1", "count=0x10")), 4,
     col(RESOURCE, "count=") + 6, "found '0x10'"),
    ("leading zero", replace(3, RESOURCE.replace("count=1", "count=01")), 4,
     col(RESOURCE, "count=") + 6, "without leading zeros"),
    ("non-ascii digits", replace(3, RESOURCE.replace("count=1", "count=١")), 4,
     col(RESOURCE, "count=") + 6, "found '١'"),
    ("quoted empty number", replace(3, RESOURCE.replace("count=1", 'count=""')), 4,
     col(RESOURCE, "count=") + 6, "found an empty value"),
    ("out of range", replace(3, RESOURCE.replace("count=1", "count=4294967296")), 4,
     col(RESOURCE, "count=") + 6, "beyond the range 0 to 4294967295"),
    ("huge number", replace(3, RESOURCE.replace("count=1", "count=" + "9" * 5000)), 4,
     col(RESOURCE, "count=") + 6, "beyond the range"),
    ("unknown enum", replace(3, RESOURCE.replace("kind=ConstantBuffer", "kind=Constant")), 4,
     col(RESOURCE, "kind=") + 5, "unknown ResourceKind 'Constant'; expected one of"),
    ("enum by value", replace(3, RESOURCE.replace("kind=ConstantBuffer", "kind=b")), 4,
     col(RESOURCE, "kind=") + 5, "unknown ResourceKind 'b'"),
    ("unknown list item", replace(2, "targets list=SpirV,Vulkan"), 3, 14, "unknown Target"),
    ("empty list item", replace(2, "targets list=SpirV,,Wgsl"), 3, 14, "empty item"),
    ("missing attribute", replace(3, RESOURCE.replace(" count=1", "")), 4,
     len(RESOURCE) - 7, "'resource' is missing the attribute 'count'"),
    ("duplicate attribute", replace(3, RESOURCE + " count=2"), 4, len(RESOURCE) + 2,
     "duplicate attribute 'count'"),
    ("wrong parent", replace(4, "  member name=\"x\" offset=0"), 5, 3,
     "'member' is not allowed under 'resource'"),
    ("child of a leaf", replace(4, [LINES[4], "    slot target=SpirV set=0 binding=0"]), 6, 5,
     "'slot' is not allowed under 'slot'"),
    ("top-level child", replace(4, "slot target=SpirV set=0 binding=0"), 5, 1,
     "'slot' is not allowed under 'file'"),
    ("second layout", replace(12, [LINES[12], *LINES[5:13]]), 14, 3, "a second 'layout'"),
    ("child order", replace(4, [LINES[5], *LINES[6:13], LINES[4]]) , 13, 3,
     "'slot' is out of order under 'resource'"),
    ("record order", "\n".join([*LINES[:3], *LINES[13:16], *LINES[3:13]]) + "\n", 7, 1,
     "'resource' is out of order under 'file'"),
    ("source first", "\n".join([LINES[0], LINES[2], LINES[1], *LINES[3:]]) + "\n", 2, 1,
     "expected the 'source' record first"),
    ("no targets", "\n".join([LINES[0], LINES[1], *LINES[3:]]) + "\n", 3, 1,
     "expected a 'targets' record"),
    ("only header", "oneshader-reflection 1\n", 2, 1, "expected the 'source' record"),
    ("second source", replace(1, [LINES[1], LINES[1]]), 3, 1, "a second 'source'"),
    ("array without element", replace(11, "          unknownrecord"), 11, 1,
     "a type of kind Array needs an 'element' child"),
    ("element without type", "\n".join(LINES[:12]) + "\n" + "\n".join(LINES[13:]) + "\n", 12, 1,
     "'element' needs one 'type' child"),
    ("layout without type", "\n".join([*LINES[:6], *LINES[13:]]) + "\n", 6, 1,
     "'layout' needs one 'type' child"),
    ("element under struct", replace(7, "      element"), 8, 7,
     "'element' is only allowed under a type of kind Array, not Struct"),
    ("dangling uses", replace(16, '  uses name="Frames"'), 17, 13,
     "'Frames' is not a resource of this file"),
    ("dangling pushuse", replace(16, '  pushuse name="P"'), 17, 16, "not a push block"),
    ("dangling specuse", replace(16, '  specuse name="S"'), 17, 16, "not a spec constant"),
    ("workgroup", replace(13, ENTRY.replace("0,0,0", "0,0")), 14,
     col(ENTRY, "workgroup=") + 10, "expected three numbers"),
    ("unknown feature bit", replace(13, [ENTRY, "  features bits=1024"]), 15, 17,
     "unknown DeviceFeatures bits 1024"),
    ("spec scalar", replace(13, [SPEC.replace("=Int", "=Float16"), ENTRY]), 14,
     col(SPEC, "scalar=") + 7, "one of Bool, Int, UInt, Float"),
    ("builtin", replace(15, LINES[15].replace("builtin=Position", "builtin=SV_Position")), 16,
     col(LINES[15], "builtin=") + 8, "unknown BuiltIn 'SV_Position'"),
    ("none token", replace(15, LINES[15].replace("builtin=Position", "builtin=None_")), 16,
     col(LINES[15], "builtin=") + 8, "unknown BuiltIn 'None_'"),
    ("depth flag", replace(3, RESOURCE + " depth=2"), 4, len(RESOURCE) + 8,
     "depth: expected 0 or 1, found '2'"),
    ("two slots for one target", replace(4, [LINES[4], "  slot target=SpirV set=1 binding=0"]),
     6, 15, "a second slot for SpirV: one per target"),
    ("two spec slots for one target", replace(13, [SPEC, '  slot target=Wgsl index=0 name="a"',
     '  slot target=Wgsl index=1 name="b"', ENTRY]), 16, 15, "a second slot for Wgsl"),
    # a struct numpy cannot hold (its itemsize is a C int): refused here, not at import
    ("struct of 2^31 bytes", replace(6, LINES[6].replace("size=128", "size=2147483648")), 7,
     col(LINES[6], "size=128") + 5, "size 2147483648 is beyond the limit of 2147483647 bytes"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_rejection_is_positioned(text: str, line: int, column: int, message: str) -> None:
    with pytest.raises(ReflectionFormatError) as info:
        ReflectionFormat.read(text.encode("utf-8"), file="x.reflection")
    err = info.value
    assert message in err.message
    assert (err.line, err.column) == (line, column), err.message
    assert err.diagnostics[0].format() == f"x.reflection:{line}:{column}: error: {err.message}"
    assert ReflectionFormat.try_read(text) is None


def test_invalid_utf8_is_positioned() -> None:
    data = GOLDEN.encode().replace(b'name="Frame"', b'name="Fr\xffme"', 1)
    with pytest.raises(ReflectionFormatError) as info:
        ReflectionFormat.read(data)
    assert (info.value.line, info.value.column) == (4, 18)
    assert "invalid UTF-8" in info.value.message


def test_the_golden_file_itself_reads() -> None:
    # The cases above are mutations of a valid file; make sure the base is valid.
    assert ReflectionFormat.try_read(GOLDEN) is not None
    assert replace(3, RESOURCE) == GOLDEN


def test_lone_surrogate_in_a_str_input_is_positioned() -> None:
    text = GOLDEN.replace('name="Frame"', 'name="Fr\ud800me"', 1)
    with pytest.raises(ReflectionFormatError) as info:
        ReflectionFormat.read(text)
    assert (info.value.line, info.value.column) == (4, 18)
    assert "surrogate" in info.value.message
