"""A shared, content-addressed cache of compiled shaders on any fsspec URL (a folder, a network
share, ``s3://bucket/prefix``...), so that most builds are someone else's rebuild.

ccache's direct mode: a *manifest* per (toolchain, options, main file's bytes) lists the include
sets seen with that main file, each as (name, digest) pairs, and for each the outputs it gave as
digests of content-addressed *blobs*. A lookup hashes the current includes a manifest names and
takes the first set that matches. Writers put the blobs first and the manifest last (each by a
rename, or an object store's whole-object put), so a reader never sees half an entry; a reader
still checks every blob against its digest, and anything damaged, partial or foreign is a miss
with a warning, never an output.

Everything read from the cache is untrusted: the manifest is decoded strictly, an output's name
is the shader's own stem with one of the suffixes its targets allow, and a reflection must parse.
Whoever can write the cache decides what a hit contains, though: only trusted writers (CI)
should have write access (docs/build.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from oneshader.buildtask.outputs import REFLECTION_SUFFIX
from oneshader.buildtask.sources import ShaderJob, options_doc, project_name
from oneshader.buildtask.state import Stamp, input_stamp
from oneshader.buildtask.toolchain import cache_toolchain
from oneshader.compiler.api import CompileResult, InputFile
from oneshader.compiler.process.wire import diagnostic_from_row, diagnostic_row
from oneshader.diagnostics import Code, Diagnostic, UserError
from oneshader.fsutil import read_regular
from oneshader.reflection.errors import ReflectionFormatError
from oneshader.reflection.format import ReflectionFormat

MANIFEST_FORMAT = "oneshader-cache-manifest"
LAYOUT = "v1"  # the top folder of every entry: a new layout starts beside the old one
MAX_INCLUDE_SETS = 16  # include sets kept per manifest (the most recent first)
CACHE_INSTALL_HINT = "pip install 'oneshader[cache]' (s3:// also needs 'oneshader[s3]')"


class CacheMode(Enum):
    """``read``: take hits, never write (developers); ``write``: compile everything and publish
    (the CI that fills the cache); ``readwrite``: both (the default)."""

    READ = "read"
    WRITE = "write"
    READWRITE = "readwrite"

    @property
    def reads(self) -> bool:
        return self is not CacheMode.WRITE

    @property
    def writes(self) -> bool:
        return self is not CacheMode.READ


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class CacheHit:
    """A verified entry: the shader's files (OUT-relative, reflection last), the stamps of the
    inputs it was checked against, and the warnings of the compile that made it."""

    files: list[tuple[str, bytes]]
    inputs: list[Stamp]
    diagnostics: tuple[Diagnostic, ...]


class Damaged(Exception):
    """An entry that cannot be used: the message says why (a miss, with a warning)."""


class _Files:
    """The current content of the project's files, read once per build and remembered: many
    shaders share an include. Each is (digest, the stamp of the read) or None if unreadable."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[str, InputFile] | None] = {}
        self._lock = threading.Lock()

    def get(self, path: Path) -> tuple[str, InputFile] | None:
        key = str(path)
        with self._lock:
            if key in self._seen:
                return self._seen[key]
        try:
            data, st = read_regular(path)
            digest = _sha(data)
            real = os.path.realpath(key)
            read = InputFile(
                real,
                st.st_mtime_ns,
                st.st_size,
                digest,
                time.time_ns(),
                named=key if real != key else "",
                identity=f"{st.st_dev}:{st.st_ino}",
            )
            found: tuple[str, InputFile] | None = (digest, read)
        except OSError:
            found = None
        with self._lock:
            self._seen[key] = found
        return found


class SharedCache:
    """One build's view of the cache at ``url``; ``warn`` reports damaged entries (thread-safe
    callers only: lookups run on several threads, so warnings are queued for the build)."""

    def __init__(self, url: str, mode: CacheMode, root: Path) -> None:
        try:
            from fsspec.core import url_to_fs
        except ImportError:
            raise _error(f"a shared cache needs fsspec: {CACHE_INSTALL_HINT}") from None
        try:
            self.fs, self.base = url_to_fs(url, skip_instance_cache=True)
        except ImportError as err:  # a protocol whose package is missing (s3fs for s3://)
            raise _error(f"cannot open the cache {url}: {err}; {CACHE_INSTALL_HINT}") from None
        except (ValueError, OSError) as err:
            raise _error(f"cannot open the cache {url}: {err}") from None
        self.url = url
        self.mode = mode
        self.root = root
        self.base = self.base.rstrip("/")
        self.files = _Files()
        self.warnings: list[str] = []
        self.broken = ""  # why the cache stopped being used in this build (unreachable)
        self._lock = threading.Lock()
        self._damaged: set[str] = set()  # blobs found not to match their digest

    # --- names -------------------------------------------------------------------------------

    def _path(self, kind: str, digest: str) -> str:
        return f"{self.base}/{LAYOUT}/{kind}/{digest[:2]}/{digest}"

    def manifest_key(self, job: ShaderJob, main_sha256: str) -> str:
        """The digest of everything but the includes that decides the shader's outputs."""
        doc = {
            "toolchain": cache_toolchain(),
            "options": options_doc(job.options, self.root),
            "main": main_sha256,
        }
        return _sha(json.dumps(doc, sort_keys=True).encode())

    def _warn(self, text: str) -> None:
        with self._lock:
            self.warnings.append(text)

    def _unreachable(self, err: Exception) -> None:
        with self._lock:
            if not self.broken:
                self.broken = f"the shared cache {self.url} failed ({type(err).__name__}: {err})"

    def take_warnings(self) -> list[str]:
        with self._lock:
            out, self.warnings = self.warnings, []
        return out

    # --- reading -----------------------------------------------------------------------------

    def lookup(self, job: ShaderJob) -> CacheHit | None:
        """The verified outputs of ``job`` as its sources now are, or None (a miss: nothing
        cached, a damaged entry (with a warning), or the cache unreachable)."""
        if not self.mode.reads or self.broken:
            return None
        main = self.files.get(job.source)
        if main is None:
            return None
        key = self.manifest_key(job, main[0])
        try:
            raw = self.fs.cat_file(self._path("manifests", key))
        except FileNotFoundError:
            return None
        except Exception as err:  # the network, permissions: stop asking for this build
            self._unreachable(err)
            return None
        try:
            entries = _decode_manifest(raw)
        except Damaged as why:
            self._warn(f"shared cache: damaged manifest for {job.label} ({why}); compiling it")
            return None
        for entry in entries:
            stamps = self._match(job, main[1], entry["inputs"])
            if stamps is None:
                continue
            try:
                files = self._fetch(job, entry["files"])
            except Damaged as why:
                self._warn(f"shared cache: damaged entry for {job.label} ({why}); compiling it")
                return None
            except Exception as err:
                self._unreachable(err)
                return None
            diagnostics = tuple(entry["diagnostics"])
            return CacheHit(files, stamps, diagnostics)
        return None

    def _match(
        self, job: ShaderJob, main: InputFile, inputs: Sequence[tuple[str, str]]
    ) -> list[Stamp] | None:
        """The stamps of the includes if each file named holds the digest recorded, else None."""
        stamps = [input_stamp(main, job.source_name, self._name(main.path))]
        for name, digest in inputs:
            found = self.files.get(self.root / name)
            if found is None or found[0] != digest:
                return None
            stamps.append(input_stamp(found[1], name, self._name(found[1].path)))
        return stamps

    def _name(self, path: str) -> str:
        return project_name(Path(path), self.root)

    def _fetch(
        self, job: ShaderJob, rows: Sequence[tuple[str, str, int]]
    ) -> list[tuple[str, bytes]]:
        """The entry's files, each checked against its digest and size; Damaged otherwise."""
        wanted = [t.suffix for t in job.options.targets if t.suffix] + [REFLECTION_SUFFIX]
        suffixes = [s for s, _, _ in rows]
        if sorted(suffixes) != sorted(wanted) or suffixes[-1] != REFLECTION_SUFFIX:
            raise Damaged(f"outputs {suffixes} are not those of targets {wanted}")
        files, bad = [], []
        for suffix, digest, size in rows:  # every blob checked: a writer repairs all it is told
            try:
                data = self.fs.cat_file(self._path("blobs", digest))
            except FileNotFoundError:
                bad.append(f"the {suffix} blob is missing")
                continue
            if len(data) != size or _sha(data) != digest:
                with self._lock:
                    self._damaged.add(digest)
                bad.append(f"the {suffix} blob does not match its digest")
            files.append((job.stem + suffix, bytes(data)))
        if bad:
            raise Damaged("; ".join(bad))
        try:
            ReflectionFormat.read(files[-1][1].decode("utf-8"))
        except (ReflectionFormatError, UnicodeDecodeError) as err:
            raise Damaged(f"the reflection does not read: {err}") from None
        return files

    # --- writing -----------------------------------------------------------------------------

    def store(self, job: ShaderJob, result: CompileResult, files: list[tuple[str, bytes]]) -> None:
        """Publish a successful compile: blobs first, the manifest last. A compile whose inputs
        changed while it ran (a digest unknown) is not stored: what it compiled is unknown."""
        if not self.mode.writes or self.broken or not result.ok or not result.inputs:
            return
        if any(not f.sha256 for f in result.inputs):
            return
        includes: list[tuple[str, str]] = []
        for f in result.inputs[1:]:
            name = self._name(f.named or f.path)  # as included: the builder's name for it
            if (name, f.sha256) not in includes:
                includes.append((name, f.sha256))
        rows = []
        try:
            for rel, data in files:
                digest = _sha(data)
                path = self._path("blobs", digest)
                with self._lock:
                    damaged = digest in self._damaged
                if damaged or not self.fs.exists(path):
                    self._put(path, data)
                rows.append([rel[len(job.stem) :], digest, len(data)])
            key = self.manifest_key(job, result.inputs[0].sha256)
            path = self._path("manifests", key)
            try:
                entries = _decode_manifest(self.fs.cat_file(path))
            except (FileNotFoundError, Damaged):
                entries = []
            entry = {
                "inputs": [list(i) for i in sorted(includes)],
                "files": rows,
                "diagnostics": [diagnostic_row(d) for d in result.diagnostics],
            }
            kept = [_encode_entry(e) for e in entries if sorted(e["inputs"]) != sorted(includes)]
            doc = {"format": MANIFEST_FORMAT, "entries": [entry, *kept][:MAX_INCLUDE_SETS]}
            self._put(path, json.dumps(doc, sort_keys=True, separators=(",", ":")).encode())
        except Exception as err:  # a full share, no permission, the network: not the build's fault
            self._unreachable(err)

    def _put(self, path: str, data: bytes) -> None:
        """Write whole: a temporary beside it, then a rename (an object store's put is whole)."""
        parent = path.rsplit("/", 1)[0]
        self.fs.makedirs(parent, exist_ok=True)
        tmp = f"{parent}/.tmp-{uuid.uuid4().hex}"
        self.fs.pipe_file(tmp, data)
        try:
            self.fs.mv(tmp, path)
        except BaseException:
            with contextlib.suppress(Exception):  # a temporary left: harmless, never read
                self.fs.rm_file(tmp)
            raise


def _encode_entry(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "inputs": [list(i) for i in entry["inputs"]],
        "files": [list(f) for f in entry["files"]],
        "diagnostics": [diagnostic_row(d) for d in entry["diagnostics"]],
    }


def _decode_manifest(raw: bytes) -> list[dict[str, Any]]:
    """The entries of a manifest, exactly the shape :meth:`SharedCache.store` writes."""
    try:
        doc = json.loads(raw)
        if type(doc) is not dict or doc.get("format") != MANIFEST_FORMAT:
            raise Damaged("not a oneshader cache manifest")
        entries = []
        for e in doc["entries"]:
            if type(e) is not dict or set(e) != {"inputs", "files", "diagnostics"}:
                raise Damaged("an entry of another shape")
            inputs = [(_text(n), _digest(d)) for n, d in e["inputs"]]
            for name, _ in inputs:
                if name.startswith("/") or not name:
                    raise Damaged(f"an include named {name!r}")
            files = [(_suffix(s), _digest(d), _size(n)) for s, d, n in e["files"]]
            if not files:
                raise Damaged("an entry without files")
            diagnostics = [diagnostic_from_row(d) for d in e["diagnostics"]]
            entries.append({"inputs": inputs, "files": files, "diagnostics": diagnostics})
        return entries
    except Damaged:
        raise
    except (ValueError, KeyError, TypeError, RecursionError) as err:
        raise Damaged(f"unreadable: {type(err).__name__}") from None


def _text(v: object) -> str:
    if type(v) is not str:
        raise ValueError("expected a string")
    return v


def _digest(v: object) -> str:
    text = _text(v)
    if len(text) != 64 or any(c not in "0123456789abcdef" for c in text):
        raise ValueError("expected a sha256")
    return text


def _suffix(v: object) -> str:
    text = _text(v)
    if not text.startswith(".") or "/" in text or "\\" in text or "\0" in text:
        raise ValueError("expected a file suffix")
    return text


def _size(v: object) -> int:
    if type(v) is not int or v < 0:
        raise ValueError("expected a size")
    return v


def _error(message: str) -> UserError:
    return UserError.at("oneshader build", 0, 0, message, Code.BAD_USAGE)


def open_cache(url: str | None, mode: str, root: Path) -> SharedCache | None:
    """The build's cache (None without a URL); a UserError when it cannot be opened at all."""
    return SharedCache(url, CacheMode(mode), root) if url else None
