"""Compiles on a Dask cluster: a real ``dask scheduler`` and two ``dask worker`` processes on
127.0.0.1, started here. A build through them writes the bytes a local build writes; a killed
worker's shaders run elsewhere, a scheduler that is gone leaves the build to local compiles, a
shader that crashes its compiler fails alone, a worker of another toolchain refuses by name, and
``tls://`` takes only clients with a certificate of the cluster's authority."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from build_helpers import CORPUS, make_project, run_cli, summary_counts
from cluster_support import Cluster, make_certificates, start_cluster

pytest.importorskip("distributed", reason="the cluster needs oneshader[distributed]")

BOMB = "\n".join(
    [
        "#define A0 x+",
        *(f"#define A{i} A{i - 1} A{i - 1}" for i in range(1, 31)),
        '[shader("compute")][numthreads(1,1,1)] void main() { float x = A30 1; }',
        "",
    ]
)


def outputs(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.name.startswith(".oneshader")
    }


def corpus_project(root: Path) -> Path:
    """tests/corpus (its shaders, their includes, the ones that fail) as a project's sources."""
    shutil.copytree(CORPUS, root / "shaders")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "c"\nversion = "0"\n\n[tool.oneshader]\nsources = ["shaders"]\n'
        'out = "out"\nmemory-limit = 1024\n'
    )
    (root / "shaders" / "Bomb.hlsl").write_text(BOMB)
    # includes named with '..', through a folder that holds nothing the compile reads
    deep = root / "shaders" / "deep"
    (deep / "sub").mkdir(parents=True)
    (deep / "sub" / "Unused.hlsli").write_text("")
    (root / "shaders" / "Parent.hlsli").write_text("static const float Scale = 2.0;\n")
    (deep / "Twice.hlsli").write_text("float twice(float x) { return x * Scale * 2.0; }\n")
    (deep / "UsesParent.hlsl").write_text(
        '#include "../Parent.hlsli"\n#include "sub/../Twice.hlsli"\n'
        "RWStructuredBuffer<float> Data;\n"
        '[shader("compute")][numthreads(8, 1, 1)]\n'
        "void main(uint3 id : SV_DispatchThreadID) { Data[id.x] = twice(Data[id.x]); }\n"
    )
    return root


def build(
    root: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_cli(root, "--no-server", *args, timeout=900, env=env)


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, bytes], list[str], str]:
    """The corpus built here: its outputs, its summary line's failures and its diagnostics."""
    root = corpus_project(tmp_path_factory.mktemp("local") / "proj")
    done = build(root)
    return outputs(root / "out"), _failed(done.stdout), done.stderr


def _failed(stdout: str) -> list[str]:
    """The shaders the summary lists as failed or crashed, in no order (builds finish them as
    they come; the bomb may fail by its memory limit or crash at it, as load decides)."""
    found: list[str] = []
    for line in stdout.splitlines():
        head, _, names = line.strip().partition(": ")
        if head in ("failed", "compiler crashed on"):
            found.extend(names.split(", "))
    return sorted(found)


def _diagnostics(stderr: str) -> list[str]:
    """The diagnostics' lines but the bomb's (which depend on the memory it got)."""
    return sorted(x for x in stderr.splitlines() if "Bomb.hlsl" not in x)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with start_cluster(tmp_path_factory.mktemp("cluster"), workers=2) as c:
        yield c


def test_the_corpus_built_on_the_cluster_is_byte_identical(
    cluster: Cluster, local: tuple[dict[str, bytes], list[str], str], tmp_path: Path
) -> None:
    root = corpus_project(tmp_path / "proj")
    done = build(root, "--scheduler", cluster.address)
    assert "note:" not in done.stderr, done.stderr  # nothing fell back to a local compile
    made, failed, diagnostics = local
    assert outputs(root / "out") == made and len(made) > 40
    assert "deep/UsesParent.spv" in made
    assert _failed(done.stdout) == failed
    # the shader that blows its compiler's memory failed alone, as here, saying the same
    assert "shaders/Bomb.hlsl" in failed
    assert _diagnostics(done.stderr) == _diagnostics(diagnostics)
    ran = cluster.compiled()
    assert sum(ran.values()) >= len(made) // 4 and len(ran) == 2, ran  # on both workers
    again = build(root, "--scheduler", cluster.address)
    assert summary_counts(again.stdout)[0] == 0 or "failed" in again.stdout  # the state is sound


def test_an_unreachable_scheduler_leaves_the_build_to_local_compiles(tmp_path: Path) -> None:
    from cluster_support import free_port

    root = make_project(tmp_path / "proj")
    done = build(root, "--scheduler", f"tcp://127.0.0.1:{free_port()}")
    assert done.returncode == 0, done.stderr
    assert (
        "note: cannot reach the Dask scheduler" in done.stderr and "compiling here" in done.stderr
    )


def _start_build(root: Path, cluster: Cluster) -> subprocess.Popen[str]:
    """A build of ``root`` through ``cluster``, left running for a fault to be planted in it."""
    command = ["-m", "oneshader.cli", "build", "--no-server", "--scheduler", cluster.address]
    return subprocess.Popen(
        [sys.executable, *command],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, CI="1"),
    )


def test_a_worker_killed_mid_compile_has_its_shaders_run_elsewhere(
    tmp_path: Path, local: tuple[dict[str, bytes], list[str], str]
) -> None:
    root = corpus_project(tmp_path / "proj")
    with start_cluster(tmp_path / "cluster", workers=2) as cluster:
        proc = _start_build(root, cluster)
        victim = cluster.wait_for_processing()
        os.kill(cluster.worker_pids[victim], signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=900)
    made, failed, _ = local
    assert outputs(root / "out") == made
    assert _failed(stdout) == failed
    assert "compiling" not in stderr  # nothing fell back here: the other worker took them


def test_a_scheduler_gone_mid_build_leaves_the_rest_to_local_compiles(
    tmp_path: Path, local: tuple[dict[str, bytes], list[str], str]
) -> None:
    root = corpus_project(tmp_path / "proj")
    with start_cluster(tmp_path / "cluster", workers=1) as cluster:
        proc = _start_build(root, cluster)
        cluster.wait_for_processing()
        cluster.scheduler.kill()
        stdout, stderr = proc.communicate(timeout=900)
    made, failed, _ = local
    assert "is gone" in stderr and "left here" in stderr, stderr
    assert outputs(root / "out") == made
    assert _failed(stdout) == failed


def test_a_worker_of_another_toolchain_refuses_by_name(tmp_path: Path) -> None:
    preload = tmp_path / "other_version.py"
    preload.write_text("import oneshader\noneshader.__version__ = '0.0.0+another'\n")
    root = make_project(tmp_path / "proj")
    with start_cluster(tmp_path / "cluster", workers=1, odd_worker_preload=preload) as cluster:
        done = build(root, "--scheduler", cluster.address)
        ran = cluster.compiled()
    assert done.returncode == 0, done.stderr
    assert "Dask worker odd refuses to compile" in done.stderr and "0.0.0+another" in done.stderr
    assert set(ran) == {"w1"}  # only the worker of the build's toolchain compiled


def test_tls_with_mutual_certificates(tmp_path: Path) -> None:
    certs = make_certificates(tmp_path / "certs")
    root = make_project(tmp_path / "proj")
    with start_cluster(tmp_path / "cluster", workers=1, certs=certs) as cluster:
        assert cluster.address.startswith("tls://")
        # a client without a certificate of the cluster's authority is refused: built here
        stranger = make_certificates(tmp_path / "stranger")
        env = dict(os.environ, **stranger.client_env())
        refused = build(root, "--scheduler", cluster.address, env=env)
        assert refused.returncode == 0
        assert "note: cannot reach the Dask scheduler" in refused.stderr
        assert cluster.compiled() == {}
        # with one, the cluster compiles
        shutil.rmtree(root / "out")
        done = build(
            root, "--scheduler", cluster.address, env=dict(os.environ, **certs.client_env())
        )
        assert done.returncode == 0 and "note:" not in done.stderr, done.stderr
        assert sum(cluster.compiled().values()) == summary_counts(done.stdout)[0] > 0
