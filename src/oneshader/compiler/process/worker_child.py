"""The worker process, forked warm by the zygote: its one-time preparation and its request loop
(the caller's side is :mod:`.worker`)."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from typing import IO, NoReturn

from oneshader.compiler.api import CompileOptions
from oneshader.compiler.process.wire import receive, send


def _make_session() -> None:
    from oneshader.compiler.slang import library

    with contextlib.suppress(Exception):  # a missing compiler is reported by the first compile
        library().session.bit_length()


def prepare() -> None:
    """Make what every compile needs before the first request (the zygote calls it once).

    Slang's session (loading its core module, ~180 ms) is made on a thread: ctypes releases the
    GIL in the call, so the driver's and the verifier's imports run meanwhile. The thread has
    ended when this returns, as forking requires."""
    warm = threading.Thread(target=_make_session, name="slang-session", daemon=True)
    warm.start()

    warm.join()


def _serve_requests(inp: IO[bytes], out: IO[bytes]) -> None:
    from oneshader.compiler.driver import compile_file

    while True:
        try:
            request = receive(inp)
        except EOFError:
            return
        if request is None:
            return
        assert isinstance(request, tuple)
        path: str = request[0]
        options: CompileOptions = request[1]
        # compile_file turns a bug into an OS9002 diagnostic: one shader fails, the worker stays.
        send(out, compile_file(path, options))


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
            _serve_requests(inp, out)
        status = 0
    finally:
        os._exit(status)
