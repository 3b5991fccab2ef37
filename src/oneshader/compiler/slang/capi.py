"""A thin ctypes binding to the Slang compiler shipped in the ``slangpy`` wheel.

Only the calls oneshader needs, and none of those known to crash (see docs/compiler.md): binding
ranges, explicit counters and dependency queries after a failed compile are never called. The
library is located without importing ``slangpy`` (which would load a GPU runtime), and its
file name pins the Slang build the binding was written against.
"""

from __future__ import annotations

import ctypes
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oneshader.diagnostics import Code, UserError

SLANG_VERSION = "2026.12"
SLANGPY_VERSION = "0.43.1"
LIBRARY_NAME = f"libslang-compiler.so.0.{SLANG_VERSION}"
INSTALL_HINT = "install the compiler extra: pip install 'oneshader[compiler]'"

# SlangCompileTarget
SPIRV = 6
METAL = 24
WGSL = 28
# SlangTargetFlags
_WHOLE_PROGRAM = 1 << 8
_SPIRV_DIRECTLY = 1 << 10
# SlangParameterCategory
CAT_MIXED = 1
CAT_CONSTANT_BUFFER = 2
CAT_SHADER_RESOURCE = 3
CAT_UNORDERED_ACCESS = 4
CAT_VARYING_INPUT = 5
CAT_VARYING_OUTPUT = 6
CAT_SAMPLER_STATE = 7
CAT_UNIFORM = 8
CAT_DESCRIPTOR_TABLE_SLOT = 9
CAT_SPECIALIZATION_CONSTANT = 10
CAT_PUSH_CONSTANT_BUFFER = 11
CAT_REGISTER_SPACE = 12

# SlangModifierID (the two that say a parameter's direction)
MODIFIER_OUT = 9
MODIFIER_INOUT = 10
# SlangTypeKind
KIND_STRUCT = 1
KIND_ARRAY = 2
KIND_MATRIX = 3
KIND_VECTOR = 4
KIND_SCALAR = 5
KIND_CONSTANT_BUFFER = 6
KIND_RESOURCE = 7
KIND_SAMPLER_STATE = 8
KIND_TEXTURE_BUFFER = 9
KIND_SHADER_STORAGE_BUFFER = 10
KIND_PARAMETER_BLOCK = 11
# SlangStage
STAGE_VERTEX = 1
STAGE_FRAGMENT = 5
STAGE_COMPUTE = 6
# SlangMatrixLayoutMode
MATRIX_ROW_MAJOR = 1

UNBOUNDED = (1 << 64) - 1
UNKNOWN = UNBOUNDED - 1

_V = ctypes.c_void_p
_P = ctypes.c_char_p
_I = ctypes.c_int
_U = ctypes.c_uint
_S = ctypes.c_size_t
_I64 = ctypes.c_int64
_U64 = ctypes.c_uint64

# name: (restype, argtypes)
_SIGNATURES: dict[str, tuple[object, list[object]]] = {
    "spCreateSession": (_V, [_P]),
    "spCreateCompileRequest": (_V, [_V]),
    "spDestroyCompileRequest": (None, [_V]),
    "spProcessCommandLineArguments": (_I, [_V, ctypes.POINTER(_P), _I]),
    "spSetTargetFlags": (None, [_V, _I, _U]),
    "spAddTranslationUnit": (_I, [_V, _I, _P]),
    "spAddTranslationUnitSourceString": (None, [_V, _I, _P, _P]),
    "spAddEntryPoint": (_I, [_V, _I, _P, _I]),
    "spCompile": (_I, [_V]),
    "spGetDiagnosticOutput": (_P, [_V]),
    "spGetTargetCodeBlob": (_I, [_V, _I, ctypes.POINTER(_V)]),
    "spGetReflection": (_V, [_V]),
    "spCompileRequest_getProgramWithEntryPoints": (_I, [_V, ctypes.POINTER(_V)]),
    "spReflection_GetParameterCount": (_U, [_V]),
    "spReflection_GetParameterByIndex": (_V, [_V, _U]),
    "spReflection_getEntryPointCount": (_U64, [_V]),
    "spReflection_getGlobalParamsTypeLayout": (_V, [_V]),
    "spReflection_getGlobalConstantBufferSize": (_S, [_V]),
    "spReflection_getEntryPointByIndex": (_V, [_V, _U64]),
    "spReflectionEntryPoint_getName": (_P, [_V]),
    "spReflectionEntryPoint_getStage": (_I, [_V]),
    "spReflectionEntryPoint_getComputeThreadGroupSize": (None, [_V, _U64, ctypes.POINTER(_U64)]),
    "spReflectionEntryPoint_getParameterCount": (_U, [_V]),
    "spReflectionEntryPoint_getParameterByIndex": (_V, [_V, _U]),
    "spReflectionEntryPoint_getResultVarLayout": (_V, [_V]),
    "spReflectionVariableLayout_GetVariable": (_V, [_V]),
    "spReflectionVariableLayout_GetTypeLayout": (_V, [_V]),
    "spReflectionVariableLayout_GetOffset": (_S, [_V, _I]),
    "spReflectionVariableLayout_GetSpace": (_S, [_V, _I]),
    "spReflectionVariableLayout_GetSemanticName": (_P, [_V]),
    "spReflectionVariableLayout_GetSemanticIndex": (_S, [_V]),
    "spReflectionVariable_GetName": (_P, [_V]),
    "spReflectionVariable_FindModifier": (_V, [_V, _U]),
    "spReflectionVariable_HasDefaultValue": (ctypes.c_bool, [_V]),
    "spReflectionVariable_GetDefaultValueInt": (_I, [_V, ctypes.POINTER(_I64)]),
    "spReflectionVariable_GetDefaultValueFloat": (_I, [_V, ctypes.POINTER(ctypes.c_float)]),
    "spReflectionTypeLayout_GetType": (_V, [_V]),
    "spReflectionTypeLayout_getKind": (_I, [_V]),
    "spReflectionTypeLayout_GetSize": (_S, [_V, _I]),
    "spReflectionTypeLayout_GetStride": (_S, [_V, _I]),
    "spReflectionTypeLayout_getAlignment": (ctypes.c_int32, [_V, _I]),
    "spReflectionTypeLayout_GetFieldCount": (ctypes.c_uint32, [_V]),
    "spReflectionTypeLayout_GetFieldByIndex": (_V, [_V, _U]),
    "spReflectionTypeLayout_GetElementStride": (_S, [_V, _I]),
    "spReflectionTypeLayout_GetElementTypeLayout": (_V, [_V]),
    "spReflectionTypeLayout_getContainerVarLayout": (_V, [_V]),
    "spReflectionTypeLayout_GetParameterCategory": (_I, [_V]),
    "spReflectionTypeLayout_GetCategoryCount": (_U, [_V]),
    "spReflectionTypeLayout_GetCategoryByIndex": (_I, [_V, _U]),
    "spReflectionTypeLayout_GetMatrixLayoutMode": (_I, [_V]),
    "spReflectionType_GetKind": (_I, [_V]),
    "spReflectionType_GetName": (_P, [_V]),
    "spReflectionType_GetElementCount": (_S, [_V]),
    "spReflectionType_GetElementType": (_V, [_V]),
    "spReflectionType_GetRowCount": (_U, [_V]),
    "spReflectionType_GetColumnCount": (_U, [_V]),
    "spReflectionType_GetScalarType": (_I, [_V]),
    "spReflectionType_GetResourceShape": (_U, [_V]),
    "spReflectionType_GetResourceAccess": (_I, [_V]),
    "spReflectionType_GetResourceResultType": (_V, [_V]),
}


def _slangpy_folder() -> Path | None:
    try:
        spec = importlib.util.find_spec("slangpy")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def slangpy_version() -> str:
    """The installed slangpy's version ("missing" if none), read from its ``.dist-info`` beside
    it: ``importlib.metadata`` would cost every build ~20 ms of imports."""
    folder = _slangpy_folder()
    if folder is None:
        return "missing"
    infos = list(folder.parent.glob("slangpy-*.dist-info"))
    if len(infos) == 1:
        return infos[0].name[len("slangpy-") : -len(".dist-info")]
    from importlib import metadata  # no (or more than one) .dist-info beside the package

    try:
        return metadata.version("slangpy")
    except metadata.PackageNotFoundError:
        return "unknown"


def missing_compiler() -> str | None:
    """Why the Slang library cannot be loaded (slangpy is not installed, or is another build
    than the binding's), or None when it can; cheap: nothing is loaded."""
    folder = _slangpy_folder()
    if folder is None:
        return "the Slang compiler (slangpy) is not installed"
    if not (folder / LIBRARY_NAME).is_file():
        return (
            f"slangpy {slangpy_version()} does not ship {LIBRARY_NAME}: oneshader's compiler "
            f"binding is written for slangpy {SLANGPY_VERSION} (Slang {SLANG_VERSION})"
        )
    return None


def library_path() -> Path:
    """The Slang library inside the installed ``slangpy`` wheel, checked against the pin;
    a UserError (OS3004) saying how to install it when it is missing."""
    reason = missing_compiler()
    if reason is not None:
        raise UserError.at("oneshader", 0, 0, f"{reason}; {INSTALL_HINT}", Code.NO_COMPILER)
    folder = _slangpy_folder()
    assert folder is not None
    return folder / LIBRARY_NAME


class Library:
    """The loaded library with typed entry points, and one global session (created on demand)."""

    def __init__(self, path: Path) -> None:
        self.dll = ctypes.CDLL(str(path))
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(self.dll, name)
            fn.restype = restype
            fn.argtypes = argtypes
            self.__dict__[name] = fn  # found without a call of __getattr__ (thousands a shader)
        self._session: int | None = None

    @property
    def session(self) -> int:
        if self._session is None:
            self._session = self.dll.spCreateSession(None)
            if not self._session:
                raise RuntimeError("spCreateSession failed")
        return self._session

    def __getattr__(self, name: str) -> Any:
        return getattr(self.dll, name)


_LIBRARY: Library | None = None


def library() -> Library:
    global _LIBRARY
    if _LIBRARY is None:
        _LIBRARY = Library(library_path())
    return _LIBRARY


# COM methods' signatures (ctypes prototypes, made once), and each method's ctypes function by
# its address and prototype: Slang's objects of a class share one vtable, so a method's function
# is made once, not at every call (a dozen calls a shader).
_GET_POINTER = ctypes.CFUNCTYPE(_V, _V)  # ISlangBlob::getBufferPointer
_GET_SIZE = ctypes.CFUNCTYPE(_S, _V)  # ISlangBlob::getBufferSize
_RELEASE = ctypes.CFUNCTYPE(ctypes.c_uint32, _V)  # ISlangUnknown::release
_GET_LAYOUT = ctypes.CFUNCTYPE(_V, _V, ctypes.c_int64, _V)  # IComponentType::getLayout
_METHODS: dict[tuple[int, Any], Any] = {}
_POINTER_SIZE = ctypes.sizeof(_V)  # a vtable's slot


def _com_call(obj: int, slot: int, prototype: Any, *args: object) -> Any:
    """Method ``slot`` of a COM object's vtable, of signature ``prototype``, called with
    ``args``."""
    vtable = _V.from_address(obj).value or 0
    address = _V.from_address(vtable + slot * _POINTER_SIZE).value or 0
    fn = _METHODS.get((address, prototype))
    if fn is None:
        fn = _METHODS[address, prototype] = prototype(address)
    return fn(obj, *args)


def _blob_bytes(blob: int) -> bytes:
    """The contents of an ISlangBlob (COM: slot 3 getBufferPointer, 4 getBufferSize, 2 release)."""
    pointer = _com_call(blob, 3, _GET_POINTER)
    size = _com_call(blob, 4, _GET_SIZE)
    data = ctypes.string_at(pointer, size) if pointer and size else b""
    _com_call(blob, 2, _RELEASE)
    return data


# The command lines given to Slang, each as the C array made of it once (its strings kept alive
# by the array): a build gives every request one of a few, and a ctypes array type made at each
# request is a reference cycle (ctypes keeps such types only weakly) that only the cycle collector
# frees. A few dozen kept at most.
_ARGVS: dict[tuple[str, ...], Any] = {}
_ARGVS_KEPT = 64


def _argv(args: list[str]) -> Any:
    """The C array (``char**``) of ``args``."""
    key = tuple(args)
    array = _ARGVS.get(key)
    if array is None:
        if len(_ARGVS) >= _ARGVS_KEPT:
            _ARGVS.clear()
        array = _ARGVS[key] = (_P * len(key))(*(a.encode() for a in key))
    return array


@dataclass
class Compiled:
    """The outcome of one compile request (the code of its first target)."""

    ok: bool
    diagnostics: str
    code: bytes
    request: Request | None


class Request:
    """One compile request for ``targets`` targets (as many ``-target`` arguments; one as a
    rule); destroyed explicitly (its reflection dies with it)."""

    def __init__(
        self,
        lib: Library,
        args: list[str],
        source: tuple[str, str] | None,
        entries: list[tuple[str, int]] = (),  # type: ignore[assignment]
        targets: int = 1,
    ) -> None:
        self.lib = lib
        self.handle: int = lib.spCreateCompileRequest(lib.session)
        self._program: int = 0  # the linked program (IComponentType), once asked for
        rc = lib.spProcessCommandLineArguments(self.handle, _argv(args), len(args))
        if rc < 0:
            self.bad_arguments = self.diagnostic_output() or f"bad arguments: {args}"
        else:
            self.bad_arguments = ""
        if source is not None:
            # An in-memory translation unit named like the file, so positions stay the file's.
            name, text = source
            unit = lib.spAddTranslationUnit(self.handle, 1, None)  # 1 = SLANG_SOURCE_LANGUAGE_HLSL
            lib.spAddTranslationUnitSourceString(self.handle, unit, name.encode(), text.encode())
            for entry, stage in entries:
                lib.spAddEntryPoint(self.handle, unit, entry.encode(), stage)
        for index in range(targets):
            lib.spSetTargetFlags(self.handle, index, _WHOLE_PROGRAM | _SPIRV_DIRECTLY)

    def diagnostic_output(self) -> str:
        out = self.lib.spGetDiagnosticOutput(self.handle)
        return out.decode("utf-8", "replace") if out else ""

    def compile(self) -> Compiled:
        if self.bad_arguments:
            return Compiled(False, self.bad_arguments, b"", None)
        rc = self.lib.spCompile(self.handle)
        diagnostics = self.diagnostic_output()
        if rc < 0:
            return Compiled(False, diagnostics, b"", self)
        code = self.code(0)
        return Compiled(code is not None, diagnostics, code or b"", self)

    def code(self, target: int) -> bytes | None:
        """The code of the request's ``target``-th target (after a compile that succeeded)."""
        blob = _V()
        rc = self.lib.spGetTargetCodeBlob(self.handle, target, ctypes.byref(blob))
        return _blob_bytes(blob.value) if rc >= 0 and blob.value else None

    def reflection(self, target: int = 0) -> int:
        """The reflection of the ``target``-th target: ``spGetReflection`` has the first only,
        the others are the linked program's layouts for them (IComponentType::getLayout)."""
        if target == 0:
            return int(self.lib.spGetReflection(self.handle) or 0)
        if not self._program:
            program = _V()
            rc = self.lib.spCompileRequest_getProgramWithEntryPoints(
                self.handle, ctypes.byref(program)
            )
            if rc < 0 or not program.value:
                return 0
            self._program = program.value
        layout = _com_call(self._program, 4, _GET_LAYOUT, target, None)
        return int(layout or 0)

    def close(self) -> None:
        if self._program:
            _com_call(self._program, 2, _RELEASE)
            self._program = 0
        if self.handle:
            self.lib.spDestroyCompileRequest(self.handle)
            self.handle = 0


def text(value: bytes | None) -> str:
    return value.decode("utf-8", "replace") if value else ""
