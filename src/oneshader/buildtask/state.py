"""The build's memory: per shader, what it was built from and what it wrote.

It lives in OUT as one JSON file with a format tag, a version and a checksum of its body (of the
body's text as stored: a load hashes the bytes it read, it does not encode the body again); a
file that is missing, unreadable, damaged or foreign is ignored (everything is rebuilt), never
trusted.
Checking is cheap: a file whose size and mtime are as recorded is taken as unchanged, and only a
file whose stamp moved is hashed (a new hash equal to the old one just refreshes the stamp).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat as stat_mode
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oneshader.compiler.api import InputFile
from oneshader.fsutil import atomic_write, read_file, read_regular

STATE_NAME = ".oneshader-state.json"
FORMAT = "oneshader-build-state"
VERSION = 2  # 2: the checksum digests the body's stored text
# An input modified this close to the moment it was stamped may change again within the same mtime
# tick; its stamp is then stored as unknown (mtime 0) so that the next check hashes it.
_RACY_NS = 100_000_000


@dataclass(slots=True)  # a build holds one per file of every shader: 2,000 shaders, ~12,000
class Stamp:
    """What a file looked like: ``path`` relative to the project (inputs) or to OUT (outputs).

    An input's ``path`` is the name the compile used (an include through a link is named by
    the link); ``real`` is the file that name led to (links resolved, relative to the project)
    and ``identity`` that file's ``device:inode``, so that a link retargeted, or a file put in
    another's place with its size and mtime, is a change. Outputs leave both empty."""

    path: str
    mtime_ns: int
    size: int
    sha256: str
    real: str = ""
    identity: str = ""


@dataclass(slots=True)
class ShaderRecord:
    """What a shader was built from and wrote. A build may refresh the stamps of the records it
    loaded while it checks them; after that a change is a new record (a save writes again only
    the records it has not written yet, :attr:`BuildState._texts`)."""

    source: str
    key: str
    inputs: list[Stamp] = field(default_factory=list)
    outputs: list[Stamp] = field(default_factory=list)


@dataclass
class BuildState:
    toolchain: str = ""
    shaders: dict[str, ShaderRecord] = field(default_factory=dict)  # by stem
    extra: dict[str, str] = field(default_factory=dict)  # e.g. the key of the bindings made
    dirty: bool = False
    # Each record's text in the stored body, by stem, with the record it was made of: a save
    # during a build encodes only the records new since the last one (encoding them all took
    # ~3 ms a save at 250 shaders). A record is replaced, not changed, once saved.
    _texts: dict[str, tuple[ShaderRecord, bytes]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    # --- files -------------------------------------------------------------------------------

    @staticmethod
    def load(out: Path) -> tuple[BuildState, str]:
        """The state stored in ``out`` and "", or an empty state and why the file was ignored."""
        path = out / STATE_NAME
        try:
            raw = read_file(path)
        except FileNotFoundError:
            return BuildState(), ""
        except OSError as err:
            return BuildState(), f"cannot read {STATE_NAME}: {err.strerror}"
        try:
            doc = json.loads(raw)
            if not isinstance(doc, dict) or doc.get("format") != FORMAT:
                return BuildState(), f"{STATE_NAME} is not a oneshader build state"
            if doc.get("version") != VERSION:
                return BuildState(), f"{STATE_NAME} has version {doc.get('version')!r}"
            checksum = doc["checksum"]
            head, tail = _frame(checksum)
            stored = raw[len(head) : -len(tail)]
            if not (raw.startswith(head) and raw.endswith(tail)) or _checksum(stored) != checksum:
                return BuildState(), f"{STATE_NAME} is damaged (checksum mismatch)"
            return _from_body(doc["body"]), ""
        except (ValueError, KeyError, TypeError, AttributeError):
            return BuildState(), f"{STATE_NAME} is damaged"

    def save(self, out: Path) -> None:
        body = self._body()
        head, tail = _frame(_checksum(body))
        # the document json.dumps(doc, sort_keys=True, separators=(",", ":")) would write
        atomic_write(out / STATE_NAME, head + body + tail)
        self.dirty = False

    def _body(self) -> bytes:
        """The body's text, ``_dumps({"extra": ..., "shaders": {stem: _record_doc(...)},
        "toolchain": ...})`` made of each record's text (an object's members in the order of
        their keys, as ``sort_keys`` puts them)."""
        texts = {}
        for stem, record in sorted(self.shaders.items()):
            text = self._texts.get(stem)
            if text is None or text[0] is not record:
                text = (record, _dumps(stem) + b":" + _dumps(_record_doc(record)))
            texts[stem] = text
        self._texts = texts
        shaders = b"{" + b",".join(text for _, text in texts.values()) + b"}"
        extra, toolchain = _dumps(self.extra), _dumps(self.toolchain)
        return b'{"extra":' + extra + b',"shaders":' + shaders + b',"toolchain":' + toolchain + b"}"


def _dumps(doc: object) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def _checksum(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def _frame(checksum: object) -> tuple[bytes, bytes]:
    """What a state file holds before and after its body's text, whose digest is
    ``checksum``: the body is the first key of the document, the rest follow it."""
    rest = _dumps({"checksum": checksum, "format": FORMAT, "version": VERSION})
    return b'{"body":', b"," + rest[1:] + b"\n"


def is_inside(rel: str) -> bool:
    """Whether ``rel`` is a normalized relative path that stays inside its folder (no ``..``,
    ``.``, empty or absolute parts): the only kind of path an output may have."""
    parts = rel.split("/")
    return (
        bool(rel)
        and "\\" not in rel
        and "\0" not in rel
        and ":" not in parts[0]
        and _NOT_A_NAME.isdisjoint(parts)
    )


_NOT_A_NAME = frozenset(("", ".", ".."))


def _stamps(items: Any) -> list[Stamp]:
    """Rows of four (an output, or an input of a build before links were recorded: no longer
    current) or six."""
    stamps = []
    for row in items:
        if len(row) not in (4, 6):
            raise ValueError("a stamp of neither 4 nor 6 fields")
        if len(row) == 6:
            p, m, s, h, r, i = row
            stamps.append(Stamp(str(p), int(m), int(s), str(h), str(r), str(i)))
        else:
            p, m, s, h = row
            stamps.append(Stamp(str(p), int(m), int(s), str(h)))
    return stamps


def _outputs(items: Any) -> list[Stamp]:
    """Output stamps: a path that could leave OUT means the file was crafted, not written by
    a build (its checksum is no secret), and the whole state is refused."""
    stamps = _stamps(items)
    for s in stamps:
        if not is_inside(s.path):
            raise ValueError(f"an output outside the output folder: {s.path!r}")
    return stamps


def _rows(stamps: list[Stamp]) -> list[list[Any]]:
    """The stored form that :func:`_stamps` reads back."""
    return [
        [s.path, s.mtime_ns, s.size, s.sha256, *((s.real, s.identity) if s.real else ())]
        for s in stamps
    ]


def _from_body(body: dict[str, Any]) -> BuildState:
    shaders = {
        str(stem): ShaderRecord(
            str(rec["source"]), str(rec["key"]), _stamps(rec["inputs"]), _outputs(rec["outputs"])
        )
        for stem, rec in body["shaders"].items()
    }
    extra = {str(k): str(v) for k, v in body.get("extra", {}).items()}
    if not all(is_inside(rel) for rel in extra.get("bindings-files", "").split("\n") if rel):
        raise ValueError("a generated module outside the bindings folder")
    return BuildState(str(body["toolchain"]), shaders, extra)


def _record_doc(r: ShaderRecord) -> dict[str, Any]:
    """A record as the body stores it (what :func:`_from_body` reads back)."""
    return {
        "source": r.source,
        "key": r.key,
        "inputs": _rows(r.inputs),
        "outputs": _rows(r.outputs),
    }


# --- stamping and checking ---------------------------------------------------------------------


def file_hash(path: str | Path) -> str:
    """The digest of a regular file's content (OSError for anything else: a FIFO put in place
    of an input must not hang the check)."""
    return hashlib.sha256(read_regular(path)[0]).hexdigest()


def stamp(
    path: str | Path,
    name: str,
    data: bytes | None = None,
    *,
    real: str = "",
    st: os.stat_result | None = None,
) -> Stamp:
    """Stamp ``path`` now; ``data`` is its content when the caller just wrote it (an output,
    whose fresh mtime is then trusted: nobody else writes it in the same tick). ``real``: for
    an input, the name of the file ``path`` leads to (its identity is recorded too). ``st``:
    its status, when the caller has it already (the write's own ``fstat``)."""
    st = os.stat(path) if st is None else st
    mtime = st.st_mtime_ns
    if data is not None:
        digest = hashlib.sha256(data).hexdigest()
    else:
        digest = file_hash(path)
        if time.time_ns() - mtime <= _RACY_NS:  # fresh: may change again within its tick
            mtime = 0
    identity = f"{st.st_dev}:{st.st_ino}" if real else ""
    return Stamp(name, mtime, st.st_size, digest, real, identity)


def input_stamp(f: InputFile, name: str, real: str) -> Stamp:
    """The stamp of a file as the compiler read it under ``name`` (``real``: the file that name
    led to). Its mtime is stored as unknown (0) when it was that close to the read (an edit
    just after may keep it), so the next check hashes it."""
    racy = f.read_ns - f.mtime_ns <= _RACY_NS
    mtime = 0 if racy or not f.sha256 else f.mtime_ns
    return Stamp(name, mtime, f.size, f.sha256, real, f.identity)


class Checker:
    """Answers "is this file as stamped?" once per file and build, however many shaders share it.

    A stamp whose size and mtime still hold is trusted; otherwise the file is hashed, and when
    the content is unchanged the stamp is refreshed in place (so the next check is cheap again).
    """

    def __init__(self) -> None:
        # path -> (its lstat, or its stat when it is a link; None when gone), its digest once
        # hashed, the file it leads to (computed when an input's check asks)
        self._seen: dict[str, tuple[os.stat_result | None, str | None, str | None]] = {}
        self._folders: dict[str, str] = {}  # folder -> with its links resolved
        self.refreshed = 0  # stamps refreshed in place (the state wants saving)

    def _look(self, path: str) -> tuple[os.stat_result | None, str | None, str | None]:
        """Stat ``path``: one ``lstat`` unless it is a link (then its target's stat, and the
        file it leads to)."""
        try:
            s = os.lstat(path)
            if stat_mode.S_ISLNK(s.st_mode):
                s = os.stat(path)
                return (s, None, os.path.realpath(self._where(path)))
        except OSError:
            return (None, None, None)
        return (s, None, None)

    def _where(self, path: str) -> str:
        """``path`` with its folders' links resolved, each folder once per build (most inputs
        share a few folders): ``os.path.realpath(path)`` for a file that is not a link."""
        folder, name = os.path.split(path)
        real_folder = self._folders.get(folder)
        if real_folder is None:
            real_folder = self._folders[folder] = os.path.realpath(folder)
        return os.path.join(real_folder, name)

    def unchanged(self, path: str, st: Stamp, real: str | None = None) -> bool:
        """Whether ``path`` still holds what ``st`` stamped; for an input, ``real`` is the
        absolute file it led to then ("" when not recorded: not current)."""
        info = self._seen.get(path)
        if info is None:
            info = self._seen[path] = self._look(path)
        s, digest, where = info
        if s is None:
            return False  # gone
        if real is not None:
            if where is None:
                where = self._where(path)
                self._seen[path] = (s, digest, where)
            if real != where:
                return False  # the name leads to another file now (a link retargeted)
        mtime, size = s.st_mtime_ns, s.st_size
        identity = f"{s.st_dev}:{s.st_ino}" if st.identity else ""
        if st.mtime_ns == mtime and st.size == size and mtime != 0 and st.identity == identity:
            return True
        if size != st.size:
            return False
        if digest is None:
            try:
                digest = file_hash(Path(path))
            except OSError:
                return False
            self._seen[path] = (s, digest, where)
        if digest != st.sha256:
            return False
        if time.time_ns() - mtime > _RACY_NS:
            if (st.mtime_ns, st.identity) != (mtime, identity):
                self.refreshed += 1
            st.mtime_ns = mtime
            st.identity = identity
        return True


def is_current(
    record: ShaderRecord, key: str, root: Path, out: Path, checker: Checker
) -> tuple[bool, bool]:
    """(current, refreshed): whether the shader's outputs are current for its inputs and key, and
    whether a stamp was refreshed on the way (the state then wants saving)."""
    if record.key != key:
        return False, False
    refreshed = checker.refreshed
    root_s, out_s = str(root), str(out)
    join, unchanged = os.path.join, checker.unchanged
    for s in record.inputs:
        real = os.path.normpath(join(root_s, s.real)) if s.real else ""
        if not unchanged(join(root_s, s.path), s, real):
            return False, False
    for s in record.outputs:
        if not unchanged(join(out_s, s.path), s):
            return False, False
    return True, checker.refreshed != refreshed
