"""Mutated valid files: try_read never raises; read raises nothing but ReflectionFormatError,
always with a real position; whatever is accepted has a stable canonical form."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from reflection_strategies import models, rich_model

from oneshader.reflection import ReflectionFormatError, ShaderReflection
from oneshader.reflection.format import ReflectionFormat

GOLDEN = (Path(__file__).parent / "golden" / "sprite.reflection").read_bytes()
RICH = ReflectionFormat.write(rich_model())
INTERESTING = b' "\\=,-\n\r\t0 9a\x00\x7f\xff\xc3\xa4u'


def mutate(data: bytes, rng: random.Random) -> bytes:
    op = rng.randrange(9)
    n = len(data)
    if op == 0:  # byte flip
        i = rng.randrange(n)
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1 :]
    if op == 1:  # an interesting byte in place of one
        i = rng.randrange(n)
        return data[:i] + bytes([rng.choice(INTERESTING)]) + data[i + 1 :]
    if op == 2:  # insert
        i = rng.randrange(n + 1)
        return data[:i] + bytes([rng.choice(INTERESTING)]) + data[i:]
    if op == 3:  # delete a run
        i = rng.randrange(n)
        return data[:i] + data[i + rng.randrange(1, 8) :]
    if op == 4:  # truncate
        return data[: rng.randrange(n)]
    lines = data.split(b"\n")
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    if op == 5:  # swap two lines
        lines[i], lines[j] = lines[j], lines[i]
    elif op == 6:  # duplicate or drop a line
        if rng.random() < 0.5:
            lines.insert(j, lines[i])
        else:
            del lines[i]
    elif op == 7:  # indentation change
        lines[i] = rng.choice([b" ", b"  ", b"    "]) + lines[i]
    else:
        lines[i] = lines[i][rng.randrange(1, 3) :]
    return b"\n".join(lines)


def check_one(data: bytes) -> ShaderReflection | None:
    result = ReflectionFormat.try_read(data)  # must not raise
    try:
        model = ReflectionFormat.read(data)
    except ReflectionFormatError as err:
        assert result is None
        assert err.line >= 1 and err.column >= 1
        assert err.message and "malformed line" not in err.message  # the slow path agreed
        return None
    assert result == model
    # Accepted (e.g. a mutation inside a string): the canonical form is stable.
    canonical = ReflectionFormat.write(model)
    assert ReflectionFormat.read(canonical) == model
    return model


def test_random_mutations_of_valid_files() -> None:
    rng = random.Random(20261202)
    accepted = rejected = 0
    for base in (GOLDEN, RICH):
        for _ in range(2500):
            data = base
            for _ in range(rng.randrange(1, 4)):
                data = mutate(data, rng) or data
            if check_one(data) is None:
                rejected += 1
            else:
                accepted += 1
    # The mutations really exercise both outcomes.
    assert rejected > 3000 and accepted > 50, (accepted, rejected)


@settings(max_examples=100, deadline=None)
@given(models(), st.randoms(use_true_random=False))
def test_mutations_of_random_models(model: ShaderReflection, rng: random.Random) -> None:
    data = ReflectionFormat.write(model)
    for _ in range(5):
        check_one(mutate(data, rng))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_after_a_valid_header(tail: bytes) -> None:
    check_one(b"oneshader-reflection 1\n" + tail)
    check_one(tail)
