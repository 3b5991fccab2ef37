"""Plain Slang requests, the baseline oneshader is compared with: one request per file and target
through oneshader's own ctypes binding, nothing of oneshader's around it (no source rewrites, no
reflection, no patching, no cross-check).

A process of this script serves requests as JSON lines on stdin/stdout (``--serve``), so that the
caller can isolate Slang's crashes (a crash ends the process; the caller starts another), or
compiles a list of requests in one cold process and reports its own time (``--batch FILE``): the
plain side of the cost comparison in ``corpus.py``.

A request: ``{"path": ..., "target": "spirv"|"msl"|"wgsl", "entries": [[name, stage], ...],
"defines": [[name, value], ...], "shifts": [[class, shift, space], ...], "row_major": bool}``
(stages as oneshader names them; no entries: the file's ``[shader]`` attributes), or with
``"targets": [...]`` instead of ``"target"``: one request for all of them (Slang's front end
once; ok when every target compiled); ``"code": true`` asks for the code too. An answer:
``{"ok": bool, "error": first error line or ""}``, with ``"code"`` (base64 of the first target's
code) when asked and compiled: the caller validates it (``corpus.py --validate-plain``).
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import time
from pathlib import Path
from typing import Any

from oneshader.compiler.api import stage_from_name
from oneshader.compiler.slang import capi as S

_SLANG_TARGET = {"spirv": "spirv", "msl": "metal", "wgsl": "wgsl"}
# Slang's stage ids, by oneshader's stage names (only the binding is imported: the cold process
# of ``--batch`` loads no more of oneshader than a plain user of Slang would)
_SLANG_STAGE = {"vertex": S.STAGE_VERTEX, "pixel": S.STAGE_FRAGMENT, "compute": S.STAGE_COMPUTE}


def plain_args(request: dict[str, Any]) -> list[str]:
    """What any Slang user passes for HLSL written for DXC: the target (SPIR-V 1.5, as oneshader
    emits it), HLSL's column-major default (row-major for DXC's -Zpr), the defines, DXC's
    register shifts and the include folders (Slang has no -enable-16bit-types: a 16-bit variant
    gets its defines only)."""
    layout = "row" if request.get("row_major") else "column"
    args = []
    for target in _targets(request):
        args += ["-target", _SLANG_TARGET[target]]
        if target == "spirv":
            args += ["-profile", "spirv_1_5", "-emit-spirv-directly"]
    args.append(f"-matrix-layout-{layout}-major")
    for name, value in request.get("defines", ()):
        args += ["-D", f"{name}={value}" if value else name]
    for cls, shift, space in request.get("shifts", ()):
        args += [f"-fvk-{cls}-shift", str(shift), "all" if space is None else str(space)]
    for folder in request.get("include_dirs", ()):
        args += ["-I", folder]
    return args


def _targets(request: dict[str, Any]) -> list[str]:
    return list(request["targets"]) if "targets" in request else [request["target"]]


def compile_request(lib: S.Library, request: dict[str, Any]) -> dict[str, Any]:
    path = request["path"]
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    entries = [(n, _SLANG_STAGE[stage_from_name(s).value]) for n, s in request.get("entries", ())]
    count = len(_targets(request))
    req = S.Request(lib, plain_args(request), (path, text), entries, targets=count)
    try:
        result = req.compile()
        codes = [req.code(i) for i in range(count)] if result.ok else []
        ok = result.ok and all(codes)
    finally:
        req.close()
    error = ""
    if not ok:
        lines = [ln for ln in result.diagnostics.splitlines() if "error" in ln.lower()]
        error = (lines or result.diagnostics.splitlines() or ["compilation failed"])[0]
    answer: dict[str, Any] = {"ok": ok, "error": error}
    if ok and request.get("code"):
        answer["code"] = base64.b64encode(codes[0] or b"").decode("ascii")
    return answer


def serve() -> None:
    lib = S.library()
    for line in sys.stdin:
        if not line.strip():
            continue
        answer = compile_request(lib, json.loads(line))
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


def batch(file: Path) -> None:
    """Every request of ``file`` (a JSON list) in this process; prints the seconds from the
    start of the process's work (loading Slang and its session included) and the paths of the
    failed requests."""
    t0 = time.perf_counter()
    lib = S.library()
    requests = json.loads(file.read_text())
    failed = [r["path"] for r in requests if not compile_request(lib, r)["ok"]]
    print(json.dumps({"seconds": time.perf_counter() - t0, "failed": failed}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--serve", action="store_true")
    group.add_argument("--batch", type=Path)
    args = parser.parse_args()
    if args.serve:
        serve()
    else:
        batch(args.batch)


if __name__ == "__main__":
    main()
