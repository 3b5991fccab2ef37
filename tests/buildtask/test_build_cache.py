"""The shared cache: two checkouts of one project (separate OUT and runtime folders) share a
folder; the second compiles nothing and writes the very bytes a local compile writes. Damaged,
partial and foreign entries are misses with a warning, never outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from build_helpers import make_project, summary_counts

from oneshader.cli import main

pytest.importorskip("fsspec", reason="the shared cache needs fsspec (pip install -e '.[all]')")

SHADERS = 5  # what make_project builds: Sprite, ui/Lit, NoMarkup, K0, K1


def outputs(out: Path) -> dict[str, bytes]:
    """Every output file of OUT but the build's own state and lock."""
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.name.startswith(".oneshader")
    }


class Checkouts:
    """Two checkouts of the same project in separate folders, each built in its own folder with
    its own runtime folder (no compile server: each build starts its own compiler)."""

    def __init__(
        self, tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ):
        self.a = make_project(tmp / "alice" / "proj")
        self.b = make_project(tmp / "bob" / "work" / "proj")
        self.shared = tmp / "share" / "oneshader-cache"
        self.tmp = tmp
        self.monkeypatch = monkeypatch
        self.capsys = capsys

    def build(self, where: Path, *args: str) -> tuple[int, str, str]:
        runtime = where.parent / "runtime"
        runtime.mkdir(mode=0o700, exist_ok=True)
        self.monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        self.monkeypatch.chdir(where)
        status = main(["build", "--no-server", "--cache", str(self.shared), *args])
        out, err = self.capsys.readouterr()
        return status, out, err

    def blobs(self) -> list[Path]:
        return sorted(p for p in (self.shared / "v1" / "blobs").rglob("*") if p.is_file())

    def manifests(self) -> list[Path]:
        return sorted(p for p in (self.shared / "v1" / "manifests").rglob("*") if p.is_file())


@pytest.fixture
def two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Checkouts:
    return Checkouts(tmp_path, monkeypatch, capsys)


def from_cache(stdout: str) -> int:
    line = [x for x in stdout.splitlines() if x.startswith("oneshader build:")][-1]
    words = line.replace(",", "").split()
    return int(words[words.index("from") - 1])


def test_another_checkout_compiles_nothing_and_writes_the_same_bytes(two: Checkouts) -> None:
    status, out, _ = two.build(two.a)
    assert status == 0 and summary_counts(out) == (SHADERS, 0, 0) and from_cache(out) == 0
    status, out, err = two.build(two.b)
    assert status == 0, err
    assert summary_counts(out) == (0, 0, 0) and from_cache(out) == SHADERS
    assert f"[{SHADERS}/{SHADERS}] from cache" in out  # the progress marks them
    assert outputs(two.b / "out") == outputs(two.a / "out")  # a's are a local compile's
    assert len(outputs(two.a / "out")) == 4 * SHADERS
    # the state recorded the hits: the next build of b finds everything current
    status, out, _ = two.build(two.b)
    assert summary_counts(out) == (0, SHADERS, 0) and from_cache(out) == 0
    # no machine path in the cache: the entries are the same for any checkout
    for manifest in two.manifests():
        assert str(two.tmp) not in manifest.read_text()


def test_an_include_set_is_matched_by_content(two: Checkouts) -> None:
    """ui/Lit includes two files: an edited include is a miss; put back, a hit again."""
    two.build(two.a)
    common = two.b / "shaders" / "ui" / "inc" / "common.hlsli"
    original = common.read_text()
    common.write_text(original + "\n// edited\n")
    status, out, _ = two.build(two.b)
    assert status == 0 and summary_counts(out)[0] == 1 and from_cache(out) == SHADERS - 1
    assert "built shaders/ui/Lit.hlsl" in out
    common.write_text(original)
    status, out, _ = two.build(two.b)
    assert summary_counts(out)[0] == 0 and from_cache(out) == 1
    assert outputs(two.b / "out") == outputs(two.a / "out")
    manifest = json.loads(
        next(m for m in two.manifests() if "common.hlsli" in m.read_text()).read_text()
    )
    assert len(manifest["entries"]) == 2  # both include sets are kept


def test_a_blob_that_does_not_match_its_digest_is_a_miss_with_a_warning(two: Checkouts) -> None:
    two.build(two.a)
    for blob in two.blobs():
        data = bytearray(blob.read_bytes())
        data[len(data) // 2] ^= 0x55
        blob.write_bytes(bytes(data))
    status, out, err = two.build(two.b)
    assert status == 0 and summary_counts(out)[0] == SHADERS and from_cache(out) == 0
    assert err.count("damaged entry") == SHADERS and "does not match its digest" in err
    assert outputs(two.b / "out") == outputs(two.a / "out")
    # the compiles put the damaged blobs right: a third checkout takes them all
    (two.b / "out").rename(two.b / "old-out")
    status, out, err = two.build(two.b)
    assert from_cache(out) == SHADERS and "warning" not in err


def test_a_partial_entry_is_a_miss_with_a_warning(two: Checkouts) -> None:
    two.build(two.a)
    for blob in two.blobs():
        if blob.read_bytes().startswith(b"\x03\x02\x23\x07"):  # the SPIR-V modules
            blob.unlink()
    status, out, err = two.build(two.b)
    assert status == 0 and summary_counts(out)[0] == SHADERS
    assert "the .spv blob is missing" in err
    assert outputs(two.b / "out") == outputs(two.a / "out")


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b'{"format": "oneshader-cache-manifest", "entries": [{"inputs": []}]}',
        json.dumps({"format": "something else", "entries": []}).encode(),
    ],
)
def test_a_damaged_manifest_is_a_miss_with_a_warning(two: Checkouts, content: bytes) -> None:
    two.build(two.a)
    for manifest in two.manifests():
        manifest.write_bytes(content)
    status, out, err = two.build(two.b)
    assert status == 0 and summary_counts(out)[0] == SHADERS and from_cache(out) == 0
    assert err.count("damaged manifest") == SHADERS


def test_outputs_a_manifest_names_outside_the_targets_are_refused(two: Checkouts) -> None:
    """A manifest is untrusted: an output that is not the shader's own stem and target suffix
    (one that would land elsewhere in OUT) makes the entry damaged."""
    two.build(two.a)
    for manifest in two.manifests():
        doc = json.loads(manifest.read_text())
        doc["entries"][0]["files"][0][0] = ".spv/../../../escape"
        manifest.write_text(json.dumps(doc))
    status, out, err = two.build(two.b)
    assert status == 0 and summary_counts(out)[0] == SHADERS
    assert err.count("damaged manifest") == SHADERS
    assert not list(two.tmp.rglob("escape*"))


def test_read_mode_never_writes_and_write_mode_never_reads(two: Checkouts) -> None:
    status, out, _ = two.build(two.a, "--cache-mode", "read")
    assert status == 0 and summary_counts(out)[0] == SHADERS
    assert not two.blobs() and not two.manifests()
    status, out, _ = two.build(two.a, "--force", "--cache-mode", "write")
    assert summary_counts(out)[0] == SHADERS and len(two.manifests()) == SHADERS
    status, out, _ = two.build(two.b, "--cache-mode", "write")
    assert summary_counts(out)[0] == SHADERS and from_cache(out) == 0
    status, out, _ = two.build(two.b, "--force", "--cache-mode", "read")
    assert summary_counts(out)[0] == 0 and from_cache(out) == SHADERS


def test_the_cache_from_pyproject_and_from_the_environment(
    two: Checkouts, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (two.a / "pyproject.toml").read_text()
    (two.a / "pyproject.toml").write_text(
        text.replace('out = "out"', 'out = "out"\ncache = "../../share/oneshader-cache"')
    )
    monkeypatch.chdir(two.a)
    assert main(["build", "--no-server"]) == 0
    assert len(two.manifests()) == SHADERS
    monkeypatch.chdir(two.b)
    monkeypatch.setenv("ONESHADER_CACHE", str(two.shared))
    monkeypatch.setenv("ONESHADER_CACHE_MODE", "read")
    capsys.readouterr()
    assert main(["build", "--no-server"]) == 0
    assert from_cache(capsys.readouterr().out) == SHADERS


def test_a_bad_cache_mode_is_reported_at_its_key(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (project / "pyproject.toml").read_text()
    (project / "pyproject.toml").write_text(
        text.replace('out = "out"', 'out = "out"\ncache = "c"\ncache-mode = "sometimes"')
    )
    assert main(["build", "--no-server"]) == 2
    err = capsys.readouterr().err
    assert (
        "pyproject.toml:9:1: error OS2004: the cache mode must be read, write or readwrite" in err
    )


def test_an_unreachable_cache_is_noted_and_the_build_goes_on(
    project: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache's folder should be")
    status = main(["build", "--no-server", "--cache", str(blocker / "cache")])
    out, err = capsys.readouterr()
    assert status == 0 and summary_counts(out)[0] == SHADERS
    assert "note: the shared cache" in err and "not used for the rest of the build" in err
