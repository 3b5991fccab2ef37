"""fsutil's temporaries: where they go, what they are called, and the errors that name a file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from oneshader import fsutil


def test_a_write_into_missing_folders_makes_them_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "s.bin"
    fsutil.atomic_write(target, b"code", durable=False)
    assert target.read_bytes() == b"code"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert os.listdir(target.parent) == ["s.bin"]


def test_a_temporary_is_named_so_that_a_sweep_knows_whose_it_is(tmp_path: Path) -> None:
    fd, tmp = fsutil._create_beside(tmp_path / "s.reflection")
    os.close(fd)
    assert fsutil.temporary_target(os.path.basename(tmp)) == "s.reflection"


def test_a_name_taken_is_not_opened_but_the_next_one_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = iter([b"\x01\x02\x03\x04", b"\x01\x02\x03\x04", b"\x0a\x0b\x0c\x0d"])
    monkeypatch.setattr(fsutil.os, "urandom", lambda n: next(names))
    taken = tmp_path / f".s.bin.01020304{fsutil.TEMPORARY_SUFFIX}"
    taken.write_bytes(b"another writer's")
    fd, tmp = fsutil._create_beside(tmp_path / "s.bin")
    os.close(fd)
    assert os.path.basename(tmp) == f".s.bin.0a0b0c0d{fsutil.TEMPORARY_SUFFIX}"
    assert taken.read_bytes() == b"another writer's"


def test_a_file_where_the_folder_should_be_is_named_in_the_error(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("a file")
    with pytest.raises(OSError) as err:
        fsutil.atomic_write(tmp_path / "out" / "s.bin", b"code")
    assert err.value.filename is not None
    assert Path(err.value.filename) == tmp_path / "out"
