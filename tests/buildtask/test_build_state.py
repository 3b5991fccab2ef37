"""The state store: round trip, distrust of anything damaged or foreign, cheap checks."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

from oneshader.buildtask.state import (
    STATE_NAME,
    VERSION,
    BuildState,
    Checker,
    ShaderRecord,
    Stamp,
    is_current,
    stamp,
)


def sample_state() -> BuildState:
    rec = ShaderRecord(
        "shaders/A.hlsl",
        "k1",
        [Stamp("shaders/A.hlsl", 123, 4, "ab")],
        [Stamp("A.spv", 456, 8, "cd")],
    )
    return BuildState("tool 1", {"A": rec}, {"bindings": "x"})


def test_round_trip(tmp_path: Path) -> None:
    sample_state().save(tmp_path)
    loaded, why = BuildState.load(tmp_path)
    assert why == ""
    assert loaded.toolchain == "tool 1"
    assert loaded.shaders == sample_state().shaders
    assert loaded.extra == {"bindings": "x"}


def test_each_save_writes_the_records_as_they_are_then(tmp_path: Path) -> None:
    state = sample_state()
    state.save(tmp_path)
    state.shaders["A"] = replace(state.shaders["A"], key="k2")
    state.shaders["B"] = ShaderRecord("shaders/B.hlsl", "k3", [], [Stamp("B.spv", 1, 2, "ef")])
    state.extra["other"] = "y"
    state.save(tmp_path)
    loaded, why = BuildState.load(tmp_path)
    assert why == "" and loaded.shaders == state.shaders and loaded.extra == state.extra
    doc = json.loads((tmp_path / STATE_NAME).read_bytes())
    # the text json.dumps would make of the whole document, the body first
    expected = json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n"
    assert (tmp_path / STATE_NAME).read_text() == expected
    del state.shaders["A"]
    state.save(tmp_path)
    assert BuildState.load(tmp_path)[0].shaders == {"B": state.shaders["B"]}


def test_missing_state_is_a_silent_fresh_start(tmp_path: Path) -> None:
    state, why = BuildState.load(tmp_path)
    assert state.shaders == {} and why == ""


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda text: text[: len(text) // 2], "damaged"),
        (lambda text: text.replace('"k1"', '"k2"'), "checksum"),
        (lambda text: text.replace("oneshader-build-state", "something-else"), "not a oneshader"),
        (lambda text: text.replace(f'"version":{VERSION}', '"version":99'), "version"),
        (lambda text: "\x00\xff garbage", "damaged"),
        (lambda text: "[1, 2, 3]", "not a oneshader"),
    ],
)
def test_damaged_or_foreign_state_is_ignored(tmp_path: Path, damage: object, reason: str) -> None:
    sample_state().save(tmp_path)
    path = tmp_path / STATE_NAME
    assert callable(damage)
    path.write_text(damage(path.read_text()))
    state, why = BuildState.load(tmp_path)
    assert state.shaders == {} and state.toolchain == ""
    assert reason in why


def test_body_edited_with_a_fixed_checksum_is_still_checked(tmp_path: Path) -> None:
    sample_state().save(tmp_path)
    path = tmp_path / STATE_NAME
    doc = json.loads(path.read_text())
    doc["body"]["shaders"]["A"]["inputs"] = "not a list"
    path.write_text(json.dumps(doc))
    state, why = BuildState.load(tmp_path)
    assert state.shaders == {} and why


def age(path: Path, seconds: float = 10.0) -> None:
    """Backdate a file so that its stamp is trusted (not within the racy window)."""
    t = time.time() - seconds
    os.utime(path, (t, t))


def test_checker_trusts_stamps_and_hashes_only_moved_files(tmp_path: Path) -> None:
    f = tmp_path / "a.hlsl"
    f.write_bytes(b"abcd")
    age(f)
    s = stamp(f, "a.hlsl")
    assert s.mtime_ns == f.stat().st_mtime_ns and s.size == 4
    assert Checker().unchanged(str(f), s)

    age(f, 5)  # touched, same content: unchanged, and the stamp moves to the new mtime
    assert Checker().unchanged(str(f), s)
    assert s.mtime_ns == f.stat().st_mtime_ns

    f.write_bytes(b"abce")  # same size, new content
    age(f, 3)
    assert not Checker().unchanged(str(f), s)
    f.unlink()
    assert not Checker().unchanged(str(f), s)


def test_fresh_input_stamps_are_rechecked_by_hash(tmp_path: Path) -> None:
    f = tmp_path / "a.hlsl"
    f.write_bytes(b"abcd")
    s = stamp(f, "a.hlsl")  # just written: could change again within the same mtime tick
    assert s.mtime_ns == 0
    assert Checker().unchanged(str(f), s)
    written = stamp(f, "a.hlsl", b"abcd")  # an output we just wrote ourselves
    assert written.mtime_ns == f.stat().st_mtime_ns


@pytest.mark.invalid_modules("stand-in outputs: the state is checked, not the modules")
def test_is_current_checks_key_inputs_and_outputs(tmp_path: Path) -> None:
    root, out = tmp_path / "p", tmp_path / "p" / "out"
    out.mkdir(parents=True)
    (root / "A.hlsl").write_bytes(b"src")
    (root / "inc.h").write_bytes(b"inc")
    (out / "A.spv").write_bytes(b"spv")
    for f in (root / "A.hlsl", root / "inc.h", out / "A.spv"):
        age(f)
    rec = ShaderRecord(
        "A.hlsl",
        "key",
        [stamp(root / n, n, real=n) for n in ("A.hlsl", "inc.h")],
        [stamp(out / "A.spv", "A.spv")],
    )
    assert is_current(rec, "key", root, out, Checker()) == (True, False)
    assert is_current(rec, "other key", root, out, Checker())[0] is False
    (root / "inc.h").write_bytes(b"INC")
    assert is_current(rec, "key", root, out, Checker())[0] is False
    (root / "inc.h").write_bytes(b"inc")
    age(root / "inc.h", 2)
    assert is_current(rec, "key", root, out, Checker()) == (True, True)  # refreshed stamp
    (out / "A.spv").write_bytes(b"torn")
    assert is_current(rec, "key", root, out, Checker())[0] is False


def forge(out: Path, outputs: list[str], bindings_files: str = "") -> None:
    """A state file as an attacker writes it: any paths, with a checksum recomputed."""
    state = sample_state()
    state.shaders["A"].outputs = [Stamp(rel, 1, 1, "x") for rel in outputs]
    if bindings_files:
        state.extra["bindings-files"] = bindings_files
    state.save(out)


@pytest.mark.parametrize(
    "rel",
    ["../victim/victim.txt", "/abs/victim.txt", "a/../../victim.txt", "./A.spv", "a//b", ""],
)
def test_a_state_naming_outputs_outside_out_is_refused(tmp_path: Path, rel: str) -> None:
    forge(tmp_path, ["A.spv", rel])
    state, why = BuildState.load(tmp_path)
    assert state.shaders == {} and "damaged" in why


def test_a_state_naming_modules_outside_the_bindings_is_refused(tmp_path: Path) -> None:
    forge(tmp_path, ["A.spv"], "A.py\n../../victim.py")
    state, why = BuildState.load(tmp_path)
    assert state.shaders == {} and "damaged" in why


@pytest.mark.parametrize("link_only", [False, True])
def test_a_forged_state_deletes_nothing_outside_out(tmp_path: Path, link_only: bool) -> None:
    """The forged records of a shader that is gone: its "outputs" would be removed (through
    a link in OUT too: a path of the right form is not enough)."""
    from oneshader.cli import main

    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "victim.txt").write_text("keep me")
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep me too")
    (tmp_path / "proj").mkdir()
    out = tmp_path / "proj" / "out"
    out.mkdir()
    (out / "link").symlink_to(victim)
    forged = ["../../victim/victim.txt", str(elsewhere), "link/victim.txt"]
    forge(out, forged[2:] if link_only else forged)
    shader = tmp_path / "proj" / "K.hlsl"
    shader.write_text('[shader("compute")][numthreads(1,1,1)] void main() {}\n')
    assert main(["build", "-q", "--no-server", str(shader), "-o", str(out)]) == 0
    assert (victim / "victim.txt").read_text() == "keep me"
    assert elsewhere.read_text() == "keep me too"
    assert (out / "K.spv").is_file()


def test_an_input_stamp_holds_the_file_its_name_led_to(tmp_path: Path) -> None:
    """A link retargeted is a change even when the new file shows the old one's size and mtime;
    a stamp that does not say where its name led (an older state's) is not current."""
    root, out = tmp_path / "p", tmp_path / "p" / "out"
    out.mkdir(parents=True)
    for name in ("v1.h", "v2.h"):
        (root / name).write_bytes(b"same")
        age(root / name)
    os.utime(root / "v2.h", ns=(0, (root / "v1.h").stat().st_mtime_ns))
    os.symlink("v1.h", root / "inc.h")
    rec = ShaderRecord("A.hlsl", "key", [stamp(root / "inc.h", "inc.h", real="v1.h")], [])
    assert is_current(rec, "key", root, out, Checker()) == (True, False)
    os.unlink(root / "inc.h")
    os.symlink("v2.h", root / "inc.h")
    assert is_current(rec, "key", root, out, Checker())[0] is False
    rec.inputs[0].real = ""
    assert is_current(rec, "key", root, out, Checker())[0] is False
