"""The shared cache in an S3 bucket through s3fs, against moto's S3 server started here on
127.0.0.1 (as s3fs's own tests do): a second checkout compiles nothing, byte for byte."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from build_helpers import make_project, summary_counts
from test_build_cache import SHADERS, from_cache, outputs

from oneshader.cli import main

pytest.importorskip("s3fs", reason="S3 needs s3fs (pip install -e '.[all,test]')")
pytest.importorskip("moto.server", reason="the S3 server is moto's (pip install -e '.[test]')")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def s3_server() -> Iterator[str]:
    """moto's S3 server on a free loopback port, stopped after the module; its endpoint URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto's server did not start") from None
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def bucket(s3_server: str, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> str:
    """A fresh bucket; the credentials and endpoint as a user sets them (AWS_* variables)."""
    import s3fs

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server)
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    name = "shaders-" + request.node.name.lower().replace("_", "-")[:40]
    fs = s3fs.S3FileSystem(skip_instance_cache=True)
    fs.mkdir(name)
    return name


def test_a_bucket_shared_by_two_checkouts(
    bucket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import s3fs

    url = f"s3://{bucket}/team/shaders"
    a = make_project(tmp_path / "a" / "proj")
    b = make_project(tmp_path / "b" / "proj")
    for where in (a, b):
        monkeypatch.chdir(where)
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(where.parent))
        assert main(["build", "--no-server", "--cache", url]) == 0
    first, second = [x for x in capsys.readouterr().out.splitlines() if "oneshader build:" in x]
    assert summary_counts(first) == (SHADERS, 0, 0) and from_cache(first) == 0
    assert summary_counts(second) == (0, 0, 0) and from_cache(second) == SHADERS
    assert outputs(b / "out") == outputs(a / "out")
    fs = s3fs.S3FileSystem(skip_instance_cache=True)
    manifests = fs.find(f"{bucket}/team/shaders/v1/manifests")
    assert len(manifests) == SHADERS
    assert not any(".tmp-" in p for p in fs.find(bucket))  # every temporary renamed
    # a damaged object is a miss with a warning, and the next writer repairs it
    blob = fs.find(f"{bucket}/team/shaders/v1/blobs")[0]
    fs.pipe_file(blob, b"not what was stored")
    monkeypatch.chdir(b)
    assert main(["build", "--no-server", "--force", "--cache", url]) == 0
    out, err = capsys.readouterr()
    assert "does not match its digest" in err and summary_counts(out)[0] == 1
    assert outputs(b / "out") == outputs(a / "out")
    assert os.environ["AWS_ENDPOINT_URL"].startswith("http://127.0.0.1:")
