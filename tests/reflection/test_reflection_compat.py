"""Forward compatibility and the reader's freedoms: unknown records (with their subtrees) and
unknown attributes are ignored, attributes may come in any order, values may be quoted or bare."""

from __future__ import annotations

import random
import re

from hypothesis import given, settings
from reflection_strategies import models, rich_model

from oneshader.reflection import ShaderReflection
from oneshader.reflection.format import ReflectionFormat

RICH = ReflectionFormat.write(rich_model()).decode("utf-8")
ATTR = re.compile(r' ([A-Za-z][A-Za-z0-9_-]*)=("(?:[^"\\]|\\.)*"|[^ ]+)')


def read(text: str) -> ShaderReflection:
    return ReflectionFormat.read(text.encode("utf-8"))


def with_unknown_records(text: str, rng: random.Random) -> str:
    """After random lines, an unknown record at a level the next line allows, with a subtree
    that holds known keywords and odd (but lexically valid) content."""
    lines = text.split("\n")[:-1]
    out = [lines[0]]
    for i, line in enumerate(lines[1:], start=1):
        out.append(line)
        if rng.random() < 0.4:
            depth = (len(line) - len(line.lstrip(" "))) // 2
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            next_depth = (len(nxt) - len(nxt.lstrip(" "))) // 2
            level = rng.randint(next_depth, depth + 1) if nxt else rng.randint(0, depth + 1)
            pad = "  " * level
            out.append(f'{pad}sampler2 name="future" bits=7 list=A,B')
            out.append(f"{pad}  slot target=Vulkan set=-1 binding=x")
            out.append(f'{pad}    type kind=Future size="big"')
            out.append(f"{pad}  entry")
    return "\n".join(out) + "\n"


def with_unknown_attributes(text: str, rng: random.Random) -> str:
    lines = text.split("\n")[:-1]
    out = [lines[0]]
    for line in lines[1:]:
        attrs = ATTR.findall(line)
        head = line[: len(line) - sum(len(k) + len(v) + 2 for k, v in attrs)]
        extra = [("future", '"x y \\" z"'), ("level", "-3"), ("kind2", "Other")]
        attrs += rng.sample(extra, rng.randint(1, 3))
        rng.shuffle(attrs)  # any attribute order
        out.append(head + "".join(f" {k}={v}" for k, v in attrs))
    return "\n".join(out) + "\n"


def requote(text: str) -> str:
    """Quote every bare value and unquote every string that needs no quotes."""

    def swap(m: re.Match[str]) -> str:
        key, value = m.group(1), m.group(2)
        if value.startswith('"'):
            body = value[1:-1]
            if body and re.fullmatch(r'[^ "\\\x00-\x1f]+', body):
                return f" {key}={body}"
            return m.group(0)
        return f' {key}="{value}"'

    return "\n".join(ATTR.sub(swap, line) for line in text.split("\n"))


def test_unknown_records_are_ignored_with_their_subtree() -> None:
    rng = random.Random(1)
    base = read(RICH)
    for _ in range(30):
        text = with_unknown_records(RICH, rng)
        assert text != RICH
        assert read(text) == base
        assert ReflectionFormat.write(read(text)).decode() == RICH


def test_unknown_attributes_and_any_attribute_order() -> None:
    rng = random.Random(2)
    base = read(RICH)
    for _ in range(30):
        assert read(with_unknown_attributes(RICH, rng)) == base


def test_bare_or_quoted_values_read_the_same() -> None:
    swapped = requote(RICH)
    assert swapped != RICH
    assert 'kind="Struct"' in swapped and "count=" in swapped
    assert read(swapped) == read(RICH)


def test_everything_at_once() -> None:
    rng = random.Random(3)
    text = requote(with_unknown_attributes(with_unknown_records(RICH, rng), rng))
    assert read(text) == read(RICH)


@settings(max_examples=60, deadline=None)
@given(models())
def test_extended_random_files_read_equal(model: ShaderReflection) -> None:
    text = ReflectionFormat.write(model).decode("utf-8")
    rng = random.Random(len(text))
    extended = with_unknown_attributes(with_unknown_records(text, rng), rng)
    assert read(extended) == model


def test_zero_features_read_as_none_and_write_back_canonical() -> None:
    lines = RICH.split("\n")
    i = next(n for n, line in enumerate(lines) if line.startswith("  features "))
    lines[i] = "  features bits=0"
    model = read("\n".join(lines))
    assert int(model.entry_points[0].features) == 0
    assert b"features" not in ReflectionFormat.write(model).split(b"CSMain")[0].split(b"VSMain")[1]
