"""The worker channel, on both sides of it: frames (an 8-byte length, then the bytes) holding
compile requests as plain data (JSON), and results as a JSON head followed by the bytes of the
reflection and the outputs it announces.

The other end of that channel may be a process forked by the compile server, which a build
finds by a path in a folder: a reply (or a request) must not be able to run code, as a pickle
can. Decoding accepts exactly the shapes encoding produces and raises :class:`ValueError` for
anything else; the reflection travels in its own file format, whose reader checks it.
"""

from __future__ import annotations

import json
import struct
from typing import IO, Any

from oneshader.compiler.api import CompileOptions, CompileResult, InputFile, OutputFile
from oneshader.compiler.process.plain import from_plain, list_of, object_with, to_plain
from oneshader.diagnostics import Diagnostic, Severity
from oneshader.reflection.errors import ReflectionFormatError
from oneshader.reflection.model import Target

__all__ = [
    "decode_request",
    "decode_result",
    "diagnostic_from_row",
    "diagnostic_row",
    "encode_request",
    "encode_result",
    "frame_size",
    "receive",
    "send",
]

_HEADER = struct.Struct("<Q")
HEADER_SIZE = _HEADER.size
_MAX_FRAME = 1 << 30  # a bigger frame is a broken or hostile peer, not a shader's outputs


def send(stream: IO[bytes], data: bytes) -> None:
    """One frame; an empty one ends the conversation."""
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def frame_size(header: bytes) -> int:
    """The size a frame's header announces; EOFError for one no worker would send."""
    (size,) = _HEADER.unpack(header)
    if size > _MAX_FRAME:
        raise EOFError
    return int(size)


def receive(stream: IO[bytes]) -> bytes:
    """One frame; EOFError at end of file, or for a frame no worker would send."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError
    size = frame_size(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return data


def _dumps(doc: object) -> bytes:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def _loads(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (UnicodeDecodeError, RecursionError) as err:
        raise ValueError(f"not a message: {err}") from None


def _str(v: object) -> str:
    if type(v) is not str:
        raise ValueError(f"expected a string, not {type(v).__name__}")
    return v


def _int(v: object) -> int:
    if type(v) is not int:
        raise ValueError(f"expected an int, not {type(v).__name__}")
    return v


# --- requests ------------------------------------------------------------------------------
# CompileOptions crosses the wire by its dataclass fields (:mod:`.plain`): a field added to it
# travels without a change here.


def encode_request(path: str, options: CompileOptions) -> bytes:
    return _dumps({"path": path, "options": to_plain(options)})


def decode_request(data: bytes) -> tuple[str, CompileOptions]:
    doc = object_with(_loads(data), {"path", "options"})
    return _str(doc["path"]), from_plain(doc["options"], CompileOptions)


# --- results -------------------------------------------------------------------------------
# A result is a frame of its own: a JSON head, then the reflection's file bytes and each
# output's bytes, as they are, in that order, the head giving their lengths. Outputs are tens
# of KB of SPIR-V, Metal and WGSL: base64 inside JSON had the worker encode them and escape
# them, and this process unescape and decode them, for each shader.

_RESULT_KEYS = {"diagnostics", "reflection", "outputs", "inputs", "crashed"}
_HEAD = struct.Struct("<I")  # the JSON head's length


def encode_result(result: CompileResult) -> bytes:
    from oneshader.reflection.format import ReflectionFormat  # a costly import: results only

    r = result
    reflection = None if r.reflection is None else ReflectionFormat.write(r.reflection)
    head = _dumps(
        {
            "diagnostics": [diagnostic_row(d) for d in r.diagnostics],
            "reflection": None if reflection is None else len(reflection),
            "outputs": [[o.target.value, len(o.data)] for o in r.outputs],
            "inputs": [
                [f.path, f.mtime_ns, f.size, f.sha256, f.read_ns, f.named, f.identity]
                for f in r.inputs
            ],
            "crashed": r.crashed,
        }
    )
    return b"".join((_HEAD.pack(len(head)), head, reflection or b"", *(o.data for o in r.outputs)))


def diagnostic_row(d: Diagnostic) -> list[Any]:
    """A diagnostic as plain data (what :func:`diagnostic_from_row` reads back)."""
    return [d.file, d.line, d.column, d.severity.value, d.message, d.code, d.excerpt]


def diagnostic_from_row(v: object) -> Diagnostic:
    """The diagnostic of a :func:`diagnostic_row`; ValueError for any other shape."""
    file, line, col, severity, message, code, excerpt = list_of(v, 7)
    return Diagnostic(
        _str(file),
        _int(line),
        _int(col),
        Severity(_str(severity)),
        _str(message),
        _str(code),
        _str(excerpt),
    )


def _length(v: object) -> int:
    if type(v) is not int or v < 0:
        raise ValueError("expected a length")
    return v


def _input(v: object) -> InputFile:
    path, mtime, size, digest, read_ns, named, identity = list_of(v, 7)
    return InputFile(
        _str(path),
        _int(mtime),
        _int(size),
        _str(digest),
        _int(read_ns),
        _str(named),
        _str(identity),
    )


def decode_result(data: bytes) -> CompileResult:
    """The result :func:`encode_result` made ``data`` of; ValueError for anything else (a
    length that does not end the frame exactly, a reflection the format's reader refuses)."""
    from oneshader.reflection.format import ReflectionFormat  # a costly import: results only

    if len(data) < _HEAD.size:
        raise ValueError("not a result: too short")
    (head_size,) = _HEAD.unpack_from(data)
    at = _HEAD.size + head_size
    if at > len(data):
        raise ValueError("not a result: its head goes past its end")
    doc = object_with(_loads(data[_HEAD.size : at]), _RESULT_KEYS)
    size = doc["reflection"]
    end = at if size is None else at + _length(size)  # the reflection's
    announced = [list_of(o, 2) for o in list_of(doc["outputs"])]
    lengths = [_length(n) for _, n in announced]
    if end + sum(lengths) != len(data):
        raise ValueError("not a result: its lengths do not end at its end")
    text = None if size is None else data[at:end]
    outputs = []
    for (target, _), n in zip(announced, lengths, strict=True):
        outputs.append(OutputFile(Target(_str(target)), data[end : end + n]))
        end += n
    try:
        reflection = None if text is None else ReflectionFormat.read(text)
    except ReflectionFormatError as err:
        raise ValueError(f"bad reflection: {err}") from None
    crashed = doc["crashed"]
    if type(crashed) is not bool:
        raise ValueError("expected a bool")
    return CompileResult(
        diagnostics=tuple(diagnostic_from_row(d) for d in list_of(doc["diagnostics"])),
        reflection=reflection,
        outputs=tuple(outputs),
        inputs=tuple(_input(f) for f in list_of(doc["inputs"])),
        crashed=crashed,
        reflection_file=text,
    )
