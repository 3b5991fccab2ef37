"""The worker process, forked warm by the zygote: its one-time preparation and its request loop
(the caller's side is :mod:`.worker`)."""

from __future__ import annotations

import contextlib
import gc
import os
import socket
import threading
from typing import IO, NoReturn


def _make_session() -> None:
    from oneshader.compiler.slang import library

    with contextlib.suppress(Exception):  # a missing compiler is reported by the first compile
        library().session.bit_length()


def prepare() -> None:
    """Make what every compile needs before the first request (the zygote calls it once).

    Slang's session (loading its core module, ~180 ms) is made on a thread: ctypes releases the
    GIL in the call, so the driver's and the verifier's imports run meanwhile. The thread starts
    before any of them (this module imports none at its top: the session is the zygote's
    longest step, and the first compile waits for it). It has ended when this returns, as
    forking requires.

    The cycle collector is then told what a worker's objects are like (:func:`_collect_less`)."""
    warm = threading.Thread(target=_make_session, name="slang-session", daemon=True)
    warm.start()
    # Every room of the compiler (~65 modules, ~0.1 s of CPU) imported here, once, not in each
    # forked worker at its first request: at -j N that was N times a cost no worker shares.
    # The driver imports the verifier's cross-check at its first compile, and the wire the
    # reflection's file format at its first reply (importing either stays cheap): here too
    # (each worker's first request imported them, ~4 ms, ~30 ms where Python compiles the
    # modules from source).
    import oneshader.compiler.driver
    import oneshader.compiler.process.wire
    import oneshader.compiler.verify.crosscheck
    import oneshader.reflection.format  # noqa: F401

    warm.join()
    _collect_less()


# Objects a worker may make (less those freed) before the cycle collector looks at the young
# ones: Python's 700 had it walk a compile's token lists ~0.7 times a shader (~0.3 ms).
_YOUNG_OBJECTS = 10_000


def _collect_less() -> None:
    """A compile's objects are freed by reference counting (they form no cycles:
    ``tests/compiler/test_no_cycles.py``), so the collector finds next to nothing; it runs
    less often, and what the imports made is frozen (never walked again, and a forked
    worker's collections do not write to the pages it shares with the zygote). No collection
    first: the imports leave no garbage to speak of, and it would cost ~9 ms at the start."""
    gc.freeze()
    gc.set_threshold(_YOUNG_OBJECTS, *gc.get_threshold()[1:])


_OUT_OF_MEMORY = 137  # what a process killed for memory exits with (128 + SIGKILL)


def serve_requests(inp: IO[bytes], out: IO[bytes]) -> None:
    from oneshader.compiler.api import CompileResult
    from oneshader.compiler.driver import compile_file
    from oneshader.compiler.process.wire import decode_request, encode_result, receive, send
    from oneshader.diagnostics import Code, Diagnostic, Severity

    while True:
        try:
            request = receive(inp)
        except EOFError:
            return
        if not request:
            return
        path, options = decode_request(request)  # ValueError: not our caller; the worker ends
        try:
            result = compile_file(path, options)
        except MemoryError:  # over the memory limit: the worker dies, as Slang's allocations do
            os._exit(_OUT_OF_MEMORY)
        except Exception as err:  # a bug in oneshader: one shader fails, the worker stays
            name = options.source_name or path
            message = f"internal error in the compiler: {type(err).__name__}: {err}"
            diag = Diagnostic(name, 0, 0, Severity.ERROR, message, Code.INTERNAL_ERROR)
            result = CompileResult(diagnostics=(diag,))
        try:
            reply = encode_result(result)
        except ValueError as err:  # a reflection the format cannot hold: a bug, one shader fails
            name = options.source_name or path
            message = f"internal error, no reflection written: {err}"
            diag = Diagnostic(name, 0, 0, Severity.ERROR, message, Code.REFLECTION_NOT_WRITTEN)
            reply = encode_result(CompileResult((*result.diagnostics, diag), None, result.outputs))
        send(out, reply)


def serve(fd: int) -> NoReturn:
    """The forked worker: frames in and out on the socket ``fd`` until end of file. It leaves
    with ``os._exit``: nothing of the zygote's (Slang's teardown, Python's) runs twice."""
    status = 1
    try:
        with (
            socket.socket(fileno=fd) as channel,
            channel.makefile("rb") as inp,
            channel.makefile("wb") as out,
        ):
            serve_requests(inp, out)
        status = 0
    finally:
        os._exit(status)
