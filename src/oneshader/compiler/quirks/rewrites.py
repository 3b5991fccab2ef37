"""The source rewrites: where the text handed to Slang differs from the file as compiled, one
record each (a DXC idiom Slang does not take, a Slang work-around, a target's gap), applied by one
loop (``rewritten``). A record's trigger works out once a compile what its edit needs (its
``plan``); targets whose plans agree get the same text, made once. A record's edits are offset
spans of one stream (``source/rewrite.py``'s ``*_edits``, lines kept), gathered from every
record and made in one pass, so that no record re-lexes another's text; the few that read what
an earlier one made (the load offsets count the arguments the status arguments leave) say so
(``reads_edited``, or a rewrite of the whole text), and the loop applies what it has gathered
before them."""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Mapping, Sized
from dataclasses import replace
from pathlib import Path
from typing import Any

from oneshader.compiler.quirks.record import EVERY_TARGET, NOT_SPIRV, Context, Probe, Rewrite
from oneshader.compiler.source import rewrite
from oneshader.compiler.source.dxc_syntax import dxc_declarations
from oneshader.compiler.source.precheck import flattened_outputs, returned_outputs
from oneshader.compiler.source.query import Edit, Stream, blanks, lexed, lexed_after
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.compiler.source.varyings import instance_id_semantics, pixel_point_sizes
from oneshader.reflection.model import ResourceTypeKind, Stage, Target

_WGSL = frozenset({Target.Wgsl})
_MSL = frozenset({Target.Msl})
_SPIRV = frozenset({Target.SpirV})

# What a compile's rewrites are for one target: each applying record's id and plan, in order.
Plan = tuple[tuple[str, Hashable], ...]


def printf_calls(src: SourceSet) -> list[tuple[Path, int, int]]:
    """Every debug-printf statement: (file, start, end)."""
    calls: list[tuple[Path, int, int]] = src.derived(
        "printf",
        lambda: [(p, i, j) for p, t in src.texts.items() for i, j in rewrite.printf_calls(t)],
    )
    return calls


def _in_any_file(src: SourceSet, finder: Callable[[str], Sized]) -> bool:
    """Whether ``finder`` finds anything in a file of ``src`` (once a read)."""
    found: bool = src.derived(("in any file", finder), lambda: any(map(finder, src.texts.values())))
    return found


def _offset_textures(src: SourceSet) -> dict[str, str]:
    found: dict[str, str] = src.derived(
        "offset textures", lambda: rewrite.offset_textures(src.texts.values())
    )
    return found


def _has_load_offsets(src: SourceSet) -> bool:
    def any_offsets() -> bool:
        textures = _offset_textures(src)  # status arguments dropped first (their record's order)
        return any(
            rewrite.load_offsets(rewrite.without_status_arguments(t), textures)
            for t in src.texts.values()
        )

    found: bool = src.derived("load offsets", any_offsets)
    return found


def _helpers_called(src: SourceSet) -> list[str]:
    """The helper functions (``rewrite.HELPERS``) the source calls without defining them."""

    def called() -> list[str]:
        texts = list(src.texts.values())
        return [
            name
            for name in rewrite.HELPERS
            if any(name in t and rewrite.helper_calls(t, name) for t in texts)
            and src.function(name) is None
        ]

    result: list[str] = src.derived("helpers called", called)
    return result


def _byte_stored(src: SourceSet) -> tuple[str, ...]:
    """The RW byte-address buffers whose ``Store`` the code calls (``rewrite.byte_store_edits``)."""

    def stored() -> tuple[str, ...]:
        names = list(src.declared_as({ResourceTypeKind.RWByteAddressBuffer}))
        texts = src.texts.values()
        return tuple(n for n in names if any(rewrite.byte_stores(t, [n]) for t in texts))

    result: tuple[str, ...] = src.derived("byte stores", stored)
    return result


def _identifiers(src: SourceSet) -> set[str]:
    """Every identifier of every file as compiled (from the token stream)."""
    found: set[str] = src.derived(
        "identifiers",
        lambda: {t.text for p in src.texts for t in src.tokens(p) if t.kind == "id"},
    )
    return found


def _outputs_returned(c: Context) -> tuple[tuple[str, str, bool, Any], ...]:
    """The entry points whose ``out``/``inout`` parameters a wrapper returns, each with a name
    of the same length that no file uses (for the function the wrapper calls: columns stay).
    WGSL entry points take no pointers; Slang's Metal crashes on them beside a vertex
    result (SIGSEGV) and stops with an internal error in a pixel entry point."""
    src, target = c.src, c.target
    words: set[str] = set()
    out = []
    for name, stage in c.stages:
        fn = src.function(name)
        if fn is None or not any(m in ("out", "inout") for f in fn.fields for m in f.modifiers):
            continue
        void = fn.returns.split()[-1:] in ([], ["void"])
        wgsl = target is Target.Wgsl and stage in (Stage.Vertex, Stage.Pixel)
        vertex_result = stage is Stage.Vertex and not void
        metal = target is Target.Msl and (stage is Stage.Pixel or vertex_result)
        form = returned_outputs(src, fn)
        if not (wgsl or metal) or form is None:
            continue
        words = words or _identifiers(src)
        hidden = next(
            (h for i in range(len(name)) if (h := "_" * (i + 1) + name[i + 1 :]) not in words),
            None,
        )
        if hidden is not None:
            flat = () if form == "direct" else flattened_outputs(src, fn) or ()
            out.append((name, hidden, form == "direct", flat))
            words = words | {hidden}
    return tuple(out)


def _declared_in(src: SourceSet, decls: Mapping[str, Any], path: Path) -> set[str]:
    return {n for n, d in decls.items() if src.resolved(d.file) == path}


def _here(path: Path, at: Collection[tuple[Path, int, int]]) -> list[tuple[int, int]]:
    return [(a, b) for p, a, b in at if p == path]


def _entry_outputs(src: SourceSet, path: Path, text: str, plan: Any) -> str:
    for name, hidden, direct, flat in plan:
        fn = src.function(name)
        if fn is not None and src.function_file(name) == path:
            text = rewrite.entry_outputs_as_results(
                text, fn.line, fn.column, name, hidden, direct, flat
            )
    return text


def _own_name_blocks(src: SourceSet, path: Path, s: Stream, plan: Any) -> list[Edit]:
    decls = src.declarations()
    renamed = [
        (decls[old].line, decls[old].column, old, new)
        for old, new in plan
        if src.resolved(decls[old].file) == path
    ]
    return rewrite.rename_edits(s, renamed) if renamed else []


def _counters(src: SourceSet, path: Path, s: Stream, plan: Any) -> list[Edit]:
    counted = src.counted_rw()
    return rewrite.counter_edits(s, counted, _declared_in(src, counted, path))


def _append_consume(src: SourceSet, path: Path, s: Stream, plan: Any) -> list[Edit]:
    # SPIR-V has hidden counters; WGSL and Metal get the same companion as RW counters.
    appended = src.append_consume()
    return rewrite.append_consume_edits(s, appended, _declared_in(src, appended, path))


def _subpass(src: SourceSet, path: Path, s: Stream, plan: Any) -> list[Edit]:
    subpass = src.subpass_inputs()
    return rewrite.subpass_edits(s, subpass, _declared_in(src, subpass, path))


def _linear(src: SourceSet, path: Path, s: Stream, plan: Any) -> list[Edit]:
    # HLSL's 'linear' is the default (perspective-correct) interpolation; Slang emits it as
    # WGSL @interpolate(linear) and Metal sample_no_perspective, which are not. Slang's
    # reflection follows packoffset there but its code does not: the padding does.
    return [*rewrite.blank_word_edits(s, "linear"), *rewrite.packoffset_edits(s)]


def _padding(src: SourceSet, path: Path, s: Stream, plan: Any) -> list[Edit]:
    here = [(p.line, p.column, p.declarations()) for p in plan if p.file == path]
    return rewrite.inserted_edits(s, here) if here else []


def _helper_prelude(names: Collection[str]) -> str:
    """The helpers of ``names``, each with its dispatch where it has one (``rewrite.SWITCHED``:
    defined for every target, whose text is then one)."""
    return " ".join(
        rewrite.HELPERS[n][1] + (" " + rewrite.SWITCHED[n][1] if n in rewrite.SWITCHED else "")
        for n in names
    )


def _always(c: Context) -> bool:
    return True


def _spelled(*words: str) -> Callable[[Context], bool]:
    """The plan of a record that finds nothing in a text spelling none of ``words`` (which no
    record before it writes): applied where a file spells one, found at C's speed. (A record
    that reads the edited text, applied, has the edits before it made and their text lexed
    again first.)"""
    return lambda c: any(w in t for t in c.src.texts.values() for w in words)


def _stream(
    edits: Callable[[Stream], list[Edit]],
) -> Callable[[SourceSet, Path, Stream, Any], list[Edit]]:
    """Edits of the stream alone."""
    return lambda src, path, s, plan: edits(s)


def _scanned(
    edits: Callable[[Stream, Any], list[Edit]],
) -> Callable[[SourceSet, Path, Stream, Any], list[Edit]]:
    """Edits of the stream with the file's scan."""
    return lambda src, path, s, plan: edits(s, src.sources[path])


def _none(src: SourceSet, path: Path, s: Stream, plan: Any) -> list[Edit]:
    return []


_DOCS: dict[str, str] = {
    "wgsl-byte-atomics": (
        "A `RWByteAddressBuffer` every use of which is one word and one of them an "
        "`Interlocked*` is declared `RWStructuredBuffer<Atomic<uint>>` (WGSL's "
        "`array<atomic<u32>>`), its `Load`, `Store` and `Interlocked*` calls on the word at "
        'the same byte address (see "Atomics").'
    ),
    "wgsl-typed-buffers": (
        "WGSL has no texel buffers: a `Buffer<T>` (`RWBuffer<T>`) of 32-bit scalars or 2- or "
        "4-vectors of them is declared `StructuredBuffer<T>` (`RWStructuredBuffer<T>`), a "
        "storage array of T (`var<storage, read>`, as the bindings bind a typed buffer "
        "there), indexed and `Load`ed as the typed buffer is, at the same byte offsets; the "
        "reflection keeps `Buffer`. Not for a 3-vector (WGSL's array stride 16, the texels "
        "12 bytes apart) nor a buffer whose `GetDimensions` the code calls: those stay "
        "Slang's E36107, which says so."
    ),
    "dxc-declarations": (
        "Declarations DXC parses and Slang does not (`source/dxc_syntax.py`; the source "
        "scanner reads the same rewritten text, so both see one set of declarations): a "
        "global struct declared with its variables (`[[vk::push_constant]] struct { uint "
        "a; } pc;`, `struct S { ... } a, b;`; Slang refuses an attribute on a struct, "
        "E31002, and cannot read an anonymous struct's variable) is declared on its own, "
        "the variables after its `}` with its attributes and qualifiers moved to them "
        "(`struct oneshader_anon_pc { uint a; }; [[vk::push_constant]] oneshader_anon_pc "
        'pc;`; the reflection gives an anonymous struct\'s layout the name "", and a '
        "generated class takes the variable's name); an out-of-line member function of "
        "HLSL 2021 (`R S::f(...) { ... }` for `R f(...);` in `struct S`; Slang's E20001 "
        "at `::`) becomes `extension S { R f(...) { ... } }` where it stands, and its "
        "declaration in the struct is blanked (`static` moves to the definition). A "
        "struct named in the same file only; a namespace's `N::f` is left alone. (An "
        "out-of-line method that assigns to the struct's members stays Slang's E30047: "
        "`mutating-methods` below reads methods written inside the struct.)"
    ),
    "register-letters": (
        "A read-only texture on an `s` register or a sampler on a `t` "
        "register (`Texture2D t : register(s1)`, `SamplerState s : register(t0, space1)`)"
        " is handed to Slang with the letter it takes for the type (E31222 otherwise; "
        "same length, so no column moves). DXC takes either letter for both; the binding "
        "policy reads the declaration as written (the number, the space, and the shift of"
        " the letter written, as DXC), so the bindings are DXC's. Any other letter that "
        "does not fit the type is DXC's error too and stays Slang's E31222."
    ),
    "wgsl-bools": (
        "The `bool` (`boolN`) type of a member of what a buffer holds (a cbuffer's,"
        " a buffer's struct's at any depth, a loose global uniform) written `uint` (same "
        "length): WGSL has no host-shareable bool, and a 4-byte uint holding 0 or 1 is "
        "how SPIR-V stores HLSL's bool too, so the host writes the same bytes; HLSL "
        "converts between the two wherever the code uses one as the other (Slang's "
        "warnings about those conversions are dropped). The WGSL's facts say bool again "
        "for those members, so the reflection is the same with or without SPIR-V."
    ),
    "pixel-point-size": (
        'A `[[vk::builtin("PointSize")]]` member of a struct a pixel entry '
        "point takes as input (at any depth), or such a parameter of a pixel entry point "
        "(with one comma beside it), is blanked out: Vulkan has no point size in the "
        "fragment stage, and DXC makes no input of it (the vertex and pixel shaders of "
        "DXC-era code share the struct); Slang would refuse it (E30702). So no target's "
        "code and no reflection has it, and the other inputs keep their locations. Where "
        "that cannot be done it is `OS1011`: the pixel shader reads it (at the read; "
        "DXC's module would be invalid), or an entry point of another stage in the same "
        "file has the struct in its signature (at the attribute; give the pixel shader "
        "its own input struct)."
    ),
    "instance-id-varyings": (
        "An `SV_InstanceID` passed from the vertex to the pixel stage (a "
        "vertex output, a pixel input) is handed to Slang under a semantic of its own, an"
        " ordinary flat varying as DXC makes it (Slang would write a built-in no target "
        "has there); the reflection says `SV_InstanceID` with its location."
    ),
    "entry-outputs": (
        "WGSL (vertex and pixel entry points) and Metal (pixel entry points, and vertex "
        "ones that also return a value): an entry point with `out`/`inout` parameters "
        "becomes a function of a name of the same length that no file spells (`main` -> "
        "`_ain`), its `[shader]`/`[earlydepthstencil]` attributes and its parameters' "
        "semantics blanked, and a wrapper named as the entry point, appended after its "
        "closing brace on its last line, takes the `in`/`inout` parameters as written and"
        " returns a struct `<entry>_oneshader_outputs` of the result (member `result`, "
        "first) and the `out`/`inout` parameters (their names, types, modifiers and "
        "semantics), so the emitted stage interface is the one SPIR-V has; the one `out` "
        "parameter of a `void` entry point, when it is a struct, is returned as it is. A "
        "struct parameter beside other outputs is returned member by member (each member "
        "of the outputs struct with its modifiers and semantic, copied from a local the "
        "function fills: no struct inside another, whose pixel-input built-ins Slang's WGSL"
        " would lose); one whose members are not all plain varyings with a semantic, or "
        "whose member names another output has, is not wrapped (OS1003 on WGSL, OS1022 on "
        "Metal)."
    ),
    "own-name-blocks": (
        "A `cbuffer`/`tbuffer` (push-constant ones too) that declares a member of its own"
        " name, as DXC-era code does (`cbuffer ubo { UBO ubo; }`, then `ubo.projection`),"
        " is handed to Slang as `ubo_N` (the first N no file of the shader spells): with "
        "`-no-mangle` Slang would put the block's name in scope beside the member's, so "
        "every `ubo.x` would be ambiguous (E39999), which it is not in HLSL. The "
        "reflection, the SPIR-V names (`ubo`, as DXC) and the bindings keep `ubo`; WGSL "
        "and MSL declare `ubo_N`, which their readers take for `ubo` (Slang's `_<n>` "
        "suffix). Slang's diagnostics are given back in the file's terms (the name `ubo`)."
    ),
    "rw-counters": (
        "`X.IncrementCounter()` becomes `X_counter[0].add(1u)` on a "
        "companion `RWStructuredBuffer<Atomic<uint>> X_counter` declared at the end of "
        "X's line (in SPIR-V named `X.counter` in the module, placed at the counter "
        "binding); `DecrementCounter` returns the new value, as DXC's. X and its uses may"
        " be in any file. For an array `X[N]`, `X[i].IncrementCounter()` becomes "
        "`X_counter[i][0].add(1u)` on `X_counter[N]` (one binding, as DXC's "
        "`counter_var_X`). A counter called on a parameter or local is `OS1002` at the "
        "call (the companion belongs to the global)."
    ),
    "append-consume": (
        "`AppendStructuredBuffer<T> X` / `ConsumeStructuredBuffer<T> X` "
        "are declared as `RWStructuredBuffer<T>` "
        "with the same companion `X_counter`; `X.Append(v)` becomes "
        "`X[X_counter[0].add(1u)]=(v)` (the old count, as DXC's SPIR-V) and `X.Consume()`"
        " becomes `X[X_counter[0].sub(1u)-1u]` (the new count). The reflection still says"
        " AppendStructuredBuffer/ConsumeStructuredBuffer, and the cross-check reads "
        "`X_counter` as X's counter (a user's own buffer called `X_counter`, where X has "
        "no counter, stays a resource). SPIR-V keeps Slang's hidden `X.counter`."
    ),
    "wgsl-unit-point-size": (
        "A PointSize member the code only ever sets to the constant 1.0 (`o.PSize ="
        " 1.0;`, what Vulkan validation asks a point-list vertex shader to write) is "
        "blanked out with those statements, and a warning (`OS1011`) says so: WGSL draws "
        "every point 1 pixel wide. A point size that is anything else is the `OS1011` "
        "error."
    ),
    "wgsl-distances": (
        "`SV_ClipDistanceN`/`SV_CullDistanceN`, which Slang's WGSL refuses "
        "(E55202), are handed to it as ordinary varyings under a marker semantic of the "
        "same length (`OS_CLIPDISTANCEN`, `OS_CULLDISTANCEN`; with a `[[vk::location]]` "
        "of its own where a sibling has one, as Slang wants all or none), and the WGSL "
        "compile's facts name them as the system values again (built-ins without a "
        'location). The WGSL entry point is then wrapped (see "Locations"): a vertex '
        "shader's clip distances become WebGPU's `@builtin(clip_distances) "
        "oneshader_clip_distances : array<f32, N>` (`enable clip_distances;`), every one "
        "of them component by component in semantic-index order (DXC's packing: `float c "
        ": SV_ClipDistance0; float d[2] : SV_ClipDistance1` is one array of 3; float, "
        "vectors and arrays of them); a pixel input clip or cull distance the shader does"
        " not read is left out of the WGSL wrapper (its value is zero for Slang's "
        "function, which never reads it). On WGSL these are `OS1003` at the declaration: "
        "a distance a pixel shader reads (WGSL's fragment stage has none), a cull "
        "distance written (WebGPU has none), more than 8 clip distances, a vertex input "
        "with either semantic. The device must be granted WebGPU's optional feature "
        "`clip-distances` (the bindings' `SHADER.required_features`, docs/bindings.md). "
        "On SPIR-V, clip (cull) distances under several semantic indices on one side of "
        "an entry point are `OS1003` at the second: Slang declares one built-in per "
        "index, which spirv-val refuses (VUID-StandaloneSpirv-OpEntryPoint-09659); one "
        "array (`float d[N] : SV_ClipDistance0`) builds for SPIR-V and WGSL. Slang's "
        "Metal writes a clip distance as a member `float x [[]]` and a pixel input as an "
        "unattributed fragment parameter, neither of which is Metal: `patch/msl.py` makes"
        " one `float` output `[[clip_distance]]` and leaves an unread pixel input out; an"
        " array, several clip distances, a cull distance and a read pixel input are "
        "`OS1003` on Metal, at the declaration."
    ),
    "vk-builtins": (
        '`[[vk::builtin("PointSize")]] float s : PSIZE` becomes `float s : SV_PointSize` '
        "(SPIR-V `BuiltIn PointSize`, Metal `[[point_size]]`); "
        "`BaseVertex`/`BaseInstance` become "
        "`SV_StartVertexLocation`/`SV_StartInstanceLocation` (SPIR-V "
        "`BaseVertex`/`BaseInstance`, Metal `[[base_vertex]]`/`[[base_instance]]`, "
        "reflected as those built-ins); `DrawIndex` becomes `SV_DrawIndex` (SPIR-V "
        "`BuiltIn DrawIndex`, reflected `builtin=DrawIndex`; Metal and WGSL have none: "
        "OS1011). Other `vk::builtin` names are OS1011 errors; WGSL has none of these "
        "four."
    ),
    "own-attributes": (
        'oneshader\'s own attributes (`[[oneshader::format("unorm8x4")]]`, '
        "read by the scanner) are blanked: Slang warns of attributes it does not know."
    ),
    "helper-numthreads": (
        "`[numthreads(...)]` on a function that is no entry point (a helper the compute "
        "shader calls, as in Sascha Willems's computecullandlod/cull.comp) is blanked: DXC "
        "ignores it there, Slang's back ends crashed on it (SIGSEGV, OS9001). Lines and "
        "columns stay."
    ),
    "sampler-type": (
        "HLSL's `sampler` type (`sampler S : register(s0);`, a parameter `sampler s`), which "
        "DXC takes for `SamplerState` and Slang does not know (E30015), becomes "
        "`SamplerState` (the reflection's rtype is SamplerState). The columns after it on "
        "its line move."
    ),
    "mutating-methods": (
        "A method of a struct that assigns to the struct's own members (`void add(float v) "
        "{ n += 1; }`, `this.x = v`, `++n`), as DXC lets an HLSL method do, gets Slang's "
        "`[mutating]` in front of it (Slang's methods cannot change their object otherwise: "
        "E30047, E30011); a static method is left alone. The columns after it on its line "
        "move."
    ),
    "void-casts": (
        "A statement's cast to void (`(void)x;`) is blanked to spaces (the "
        "expression is evaluated and discarded all the same); Slang failed on it for "
        "every target without a position. A parameter list `f(void)` is left alone."
    ),
    "classes": (
        "HLSL's `class Name {` (or `class Name : Base {`) becomes `struct`:"
        " in HLSL a class is a struct (a value type, public members), while Slang takes "
        "`class` for its own reference type, whose methods its SPIR-V and WGSL emitters "
        "cannot write (an internal error without a position, E99997). `enum class` and "
        "`template<class T>` are left alone."
    ),
    "one-component-texels": (
        "A texture or typed buffer of one-component vectors (`Texture2D<float1>`, "
        "`RWTexture2D<uint1>`, `Buffer<int1>`) is the scalar's (`Texture2D<float>`) on "
        "every target: Slang's WGSL refused the vector (E41400 \"WGSL supports only "
        'f32/i32/u32 type textures"); a read gives the scalar, which converts to the '
        "one-component vector and takes its swizzles."
    ),
    "pack-matrix": (
        "`#pragma pack_matrix(row_major)` (or `column_major`; Slang ignores"
        " the pragma) is blanked, and every matrix declared after it without its own "
        "majorness (a member, global, parameter, local or template argument; not a "
        "function result, where Slang allows no modifier) gets the pragma's keyword, up "
        "to the next such pragma."
    ),
    "matrix-array-majorness": (
        "`row_major float2x3 m[2]` (or `column_major`, an array of "
        "matrices) becomes `_os_major0 m[2]` after `typedef row_major float2x3 "
        "_os_major0;`, inserted after the `;`/`{`/`}` before the declaration (Slang keeps"
        " a typedef's majorness, not an array's)."
    ),
    "space-only-registers": (
        "DXC's `: register(spaceN)` is blanked (Slang rejects it, E31222; "
        "the binding policy places the resource)."
    ),
    "bitfield-words": (
        "A bitfield whose type differs from the bitfield before it gets a "
        "zero-width `uint _os_wordN : 0;` before it (inserted after the previous member's"
        " `;`), so it starts a new word, as in DXC."
    ),
    "cbuffer-resources": (
        "A resource declared inside a `cbuffer` is declared before the "
        "cbuffer instead (after the `;`/`{`/`}` before it), as DXC makes it a global "
        "resource; a cbuffer of nothing but resources loses its header and closing brace "
        "(DXC drops it; its register reserves nothing)."
    ),
    "subpass-inputs": (
        "`SubpassInput<float>` (a texel of 1 to 3 components) becomes "
        "`SubpassInput<float4>` and its `x.SubpassLoad(...)` `x.SubpassLoad(...).x` "
        "(`.xy`, `.xyz`): Slang's SPIR-V reads a narrower texel with an `OpImageRead` of "
        "that width, which spirv-val rejects; DXC reads four and keeps the first, as this"
        " does. The reflection keeps the declared texel type."
    ),
    "linear": (
        "The `linear` modifier blanked out (it is HLSL's default; Slang "
        "would emit WGSL's `linear`, which is no-perspective); `: packoffset(...)` is "
        "blanked too (Slang's code for them ignores it while its reflection follows it: "
        "the padding members place the member)."
    ),
    "status-arguments": (
        "A texture method's sparse-residency status argument blanked "
        "(`t.Load(loc, offset, status)`, `t.Sample(s, uv, offset, clamp, status)`...: the"
        " last argument at a count only the status form has, a name declared `uint`), and"
        " `CheckAccessFullyMapped(status)` defined as `true`: neither target has "
        "residency feedback, and every texel is resident there."
    ),
    "printf": (
        "Every `printf(...);` statement blanked, with a warning (OS1003) "
        "at each: debug printf exists on SPIR-V only and changes nothing a shader "
        "computes."
    ),
    "sample-positions": (
        "`t.GetSamplePosition(i)` on a `Texture2DMS`/`Texture2DMSArray` "
        "becomes `oneshader_GetSamplePosition(t, i)`, a helper that reads the standard "
        "sample positions (D3D's and Vulkan's, which are WebGPU's for its 4 samples and "
        "Metal's defaults) for the texture's sample count, as DXC's SPIR-V does: WGSL and"
        " Metal cannot ask for a sample's position, and Slang's SPIR-V crashed on it "
        "(SIGSEGV)."
    ),
    "load-offsets": (
        "A texture `Load` with an offset (`t.Load(loc, offset)`, "
        "multisampled `t.Load(coord, sample, offset)`) becomes "
        "`t.Load(oneshader_offset(loc, offset)[, sample])`, the offset added to the "
        "location (widened with zeros for the mip level or layer), which Slang does only "
        "for SPIR-V (E36107 before)."
    ),
    "helpers": (
        "HLSL intrinsics Slang has only for other targets (or crashes on) become calls of"
        " helpers that do the same, defined before the main file's first line (`#line 1` "
        "keeps the positions): `clip(x)` (WGSL, Metal) is `if (any(x < 0)) discard;`, "
        "`fwidth(x)` (Metal) is `abs(ddx(x)) + abs(ddy(x))`, `dst(a, b)` (every target: "
        "Slang's SPIR-V and Metal back ends crash on it) is `float4(1, a.y * b.y, a.z, "
        "b.w)`; on WGSL `WaveIsFirstLane()` is `WaveReadLaneFirst(WaveGetLaneIndex()) =="
        " WaveGetLaneIndex()` (Slang's `subgroupElect`, which wgpu-py's naga does not know),"
        " `QuadReadLaneAt(x, i)` is `WaveReadLaneAt(x, (WaveGetLaneIndex() & ~3) + i)` and"
        " `WaveActiveCountBits(b)` counts the bits of `WaveActiveBallot(b)` (Slang's E36107"
        " for both). The call is renamed `oneshader_fwidth(` (`oneshader_<name>(`). A user's "
        "own function of that name is left alone. `clip` of a matrix (`float2x3`...) "
        "discards where any element is negative, row by row. `clip` is called on every "
        "target, SPIR-V's too, as `oneshader_target_clip(`, a function forced inline "
        "whose `__target_switch` calls the helper on WGSL and Metal and Slang's own `clip`"
        " on SPIR-V, so that the three targets share one text (one Slang request) and each"
        " target's code is what its own text made before, byte for byte; on SPIR-V a "
        "matrix meets an overload of `clip` for matrices, the helper's (Slang's SPIR-V "
        "back end aborts on its own, SIGABRT). Slang's messages about such a call name "
        "`clip`."
    ),
    "metal-buffer-lengths": (
        "`X.GetDimensions(` on a global buffer becomes `oneshader_GetDimensions(X,"
        " oneshader_lengths.X, `, with the helpers and the companion `oneshader_lengths` "
        'defined before the main file\'s first line (see "Buffer lengths on Metal").'
    ),
    "byte-stores": (
        "A bool value of `X.Store(offset, v)` (`Store2`..`Store4`, "
        "`Store<T>`) on a global `RWByteAddressBuffer` (a comparison or logical "
        "operation, a negation, `true`/`false`, `isnan`/`isinf`/`isfinite`/`any`/`all`, a"
        " `bool` cast or variable) becomes `oneshader_stored(v)`, defined before the main"
        " file's first line: for a `bool` (or `bool2`..`bool4`) it is the `uint` 0 or 1 "
        "DXC stores (overloads for float, int, uint and half pass a value that only looks"
        " boolean as it is). Slang stores a bool as `bitcast<u32>(b)` in WGSL (naga: not "
        "WGSL), `as_type<uint32_t>(b)` of Metal's 1-byte bool, and a bool vector as such "
        "in SPIR-V (spirv-val refuses it)."
    ),
    "sixteen-bit-literals": (
        "`asfloat16`/`asuint16`/`asint16` of a float literal (FidelityFX's "
        "`asfloat16(1.0)`) meet overloads taking float, defined before the main file's "
        "first line: DXC's literal converts to half, the one 16-bit type it can be, where"
        " Slang's `1.0` is a float that converts to half, int16_t and uint16_t alike "
        "(E39999, ambiguous call)."
    ),
    "offset-padding": ('`[[vk::offset]]`\'s padding members (see "One layout for all targets").'),
}


REWRITES: tuple[Rewrite, ...] = (
    Rewrite(
        "dxc-declarations",
        EVERY_TARGET,
        _DOCS["dxc-declarations"],
        _always,
        text=lambda src, path, text, plan: (
            src.dxc_declared(path) if text is src.texts[path] else dxc_declarations(text)
        ),
    ),
    Rewrite(
        "mutating-methods",
        EVERY_TARGET,
        _DOCS["mutating-methods"],
        lambda c: c.src.mutating_methods(),
        lambda src, path, s, plan: rewrite.inserted_edits(
            s, [(line, col, "[mutating] ") for p, line, col in plan if p == path]
        ),
    ),
    Rewrite(
        "register-letters",
        EVERY_TARGET,
        _DOCS["register-letters"],
        _always,
        _scanned(rewrite.register_letter_edits),
    ),
    Rewrite(
        "wgsl-bools",
        _WGSL,
        _DOCS["wgsl-bools"],
        lambda c: bool(c.src.buffer_bools()),
        lambda src, path, s, plan: rewrite.bool_edits(
            s, [(line, col) for p, line, col in src.buffer_bools().values() if p == path]
        ),
    ),
    Rewrite(
        "pixel-point-size",
        EVERY_TARGET,
        _DOCS["pixel-point-size"],
        lambda c: tuple(
            (p.path, *p.span) for p in pixel_point_sizes(c.src, dict(c.stages)) if p.left_out
        ),
        lambda src, path, s, plan: blanks(s.text, _here(path, plan)),
    ),
    Rewrite(
        "instance-id-varyings",
        EVERY_TARGET,
        _DOCS["instance-id-varyings"],
        lambda c: tuple(instance_id_semantics(c.src, dict(c.stages))),
        lambda src, path, s, plan: rewrite.instance_id_edits(s, _here(path, plan)),
    ),
    # the wrapper reads the parameters as the records before left them
    Rewrite(
        "entry-outputs",
        NOT_SPIRV,
        _DOCS["entry-outputs"],
        _outputs_returned,
        text=_entry_outputs,
        per_target=True,
    ),
    Rewrite(
        "own-name-blocks",
        EVERY_TARGET,
        _DOCS["own-name-blocks"],
        lambda c: tuple(c.src.renamed_blocks().items()),
        _own_name_blocks,
    ),
    Rewrite(
        "rw-counters",
        EVERY_TARGET,
        _DOCS["rw-counters"],
        lambda c: bool(c.src.counted_rw()),
        _counters,
    ),
    Rewrite(
        "append-consume",
        NOT_SPIRV,
        _DOCS["append-consume"],
        lambda c: bool(c.src.append_consume()),
        _append_consume,
    ),
    Rewrite(
        "wgsl-unit-point-size",
        _WGSL,
        _DOCS["wgsl-unit-point-size"],
        lambda c: bool(c.src.unit_point_sizes()),
        lambda src, path, s, plan: rewrite.point_size_edits(s, src.unit_point_sizes()),
    ),
    Rewrite(
        "wgsl-distances",
        _WGSL,
        _DOCS["wgsl-distances"],
        lambda c: c.src.has_distances(),
        _stream(rewrite.distance_edits),
    ),
    # a PointSize member the two records before blanked is no built-in to rename
    Rewrite(
        "vk-builtins",
        EVERY_TARGET,
        _DOCS["vk-builtins"],
        _spelled("builtin"),
        _stream(rewrite.vk_builtin_edits),
        reads_edited=True,
    ),
    Rewrite(
        "own-attributes",
        EVERY_TARGET,
        _DOCS["own-attributes"],
        _always,
        _stream(rewrite.own_attribute_edits),
    ),
    Rewrite(
        "void-casts", EVERY_TARGET, _DOCS["void-casts"], _always, _stream(rewrite.void_cast_edits)
    ),
    Rewrite("classes", EVERY_TARGET, _DOCS["classes"], _always, _stream(rewrite.class_edits)),
    Rewrite(
        "helper-numthreads",
        EVERY_TARGET,
        _DOCS["helper-numthreads"],
        lambda c: tuple(sorted(name for name, _ in c.stages)),
        lambda src, path, s, plan: rewrite.helper_numthreads_edits(s, plan),
    ),
    Rewrite(
        "sampler-type",
        EVERY_TARGET,
        _DOCS["sampler-type"],
        _always,
        _stream(rewrite.sampler_edits),
    ),
    Rewrite(
        "one-component-texels",
        EVERY_TARGET,
        _DOCS["one-component-texels"],
        _always,
        _stream(rewrite.one_component_edits),
    ),
    Rewrite(
        "pack-matrix",
        EVERY_TARGET,
        _DOCS["pack-matrix"],
        _always,
        _stream(rewrite.pack_matrix_edits),
    ),
    # an array of matrices pack-matrix gave a majorness is one too
    Rewrite(
        "matrix-array-majorness",
        EVERY_TARGET,
        _DOCS["matrix-array-majorness"],
        _spelled(*rewrite.MAJORNESS),
        _stream(rewrite.majorness_edits),
        reads_edited=True,
    ),
    Rewrite(
        "space-only-registers",
        EVERY_TARGET,
        _DOCS["space-only-registers"],
        _always,
        _stream(rewrite.space_only_register_edits),
    ),
    Rewrite(
        "bitfield-words",
        EVERY_TARGET,
        _DOCS["bitfield-words"],
        _always,
        _scanned(rewrite.bitfield_edits),
    ),
    # moves the declarations as the records before wrote them
    Rewrite(
        "cbuffer-resources",
        EVERY_TARGET,
        _DOCS["cbuffer-resources"],
        lambda c: any(f.block_resources for f in c.src.sources.values()),
        _scanned(rewrite.block_resource_edits),
        reads_edited=True,
    ),
    Rewrite(
        "subpass-inputs",
        _SPIRV,
        _DOCS["subpass-inputs"],
        lambda c: bool(c.src.subpass_inputs()),
        _subpass,
    ),
    Rewrite("linear", NOT_SPIRV, _DOCS["linear"], _always, _linear),
    Rewrite(
        "status-arguments",
        NOT_SPIRV,
        _DOCS["status-arguments"],
        lambda c: _in_any_file(c.src, rewrite.status_arguments),
        _stream(rewrite.status_argument_edits),
    ),
    Rewrite(
        "printf",
        NOT_SPIRV,
        _DOCS["printf"],
        lambda c: bool(printf_calls(c.src)),
        _stream(rewrite.printf_edits),
    ),
    Rewrite(
        "sample-positions",
        EVERY_TARGET,
        _DOCS["sample-positions"],
        lambda c: _in_any_file(c.src, rewrite.sample_position_queries),
        _stream(rewrite.sample_position_edits),
        prelude=lambda plan: rewrite.SAMPLE_POSITION_HELPER,
        rank=6,
    ),
    # the calls without their status arguments (their arguments are counted)
    Rewrite(
        "load-offsets",
        NOT_SPIRV,
        _DOCS["load-offsets"],
        lambda c: _has_load_offsets(c.src),
        text=lambda src, path, text, plan: rewrite.without_load_offsets(
            text, _offset_textures(src)
        ),
        prelude=lambda plan: rewrite.OFFSET_HELPER,
        rank=4,
    ),
    Rewrite(
        "helpers",
        EVERY_TARGET,
        _DOCS["helpers"],
        lambda c: tuple(
            n
            for n in _helpers_called(c.src)
            if c.target in rewrite.HELPERS[n][0] or n in rewrite.SWITCHED
        ),
        lambda src, path, s, plan: rewrite.helper_edits(s, plan),
        prelude=_helper_prelude,
        rank=1,
        per_target=True,
    ),
    Rewrite(
        "sixteen-bit-literals",
        EVERY_TARGET,
        _DOCS["sixteen-bit-literals"],
        lambda c: _in_any_file(c.src, rewrite.sixteen_bit_casts),
        _none,
        prelude=lambda plan: rewrite.SIXTEEN_BIT_LITERALS,
        rank=2,
    ),
    Rewrite(
        "metal-buffer-lengths",
        _MSL,
        _DOCS["metal-buffer-lengths"],
        lambda c: tuple(c.src.measured_buffers()),
        lambda src, path, s, plan: rewrite.buffer_length_edits(s, plan),
        prelude=rewrite.buffer_lengths_prelude,
        rank=3,
    ),
    Rewrite(
        "byte-stores",
        EVERY_TARGET,
        _DOCS["byte-stores"],
        lambda c: _byte_stored(c.src),
        lambda src, path, s, plan: rewrite.byte_store_edits(s, plan),
        prelude=lambda plan: rewrite.BYTE_STORE_PRELUDE,
        rank=5,
    ),
    # rewrites whole calls, nested ones inside out
    Rewrite(
        "wgsl-byte-atomics",
        _WGSL,
        _DOCS["wgsl-byte-atomics"],
        lambda c: c.src.byte_atomic_buffers(),
        text=lambda src, path, text, plan: rewrite.byte_atomics(text, plan),
    ),
    Rewrite(
        "wgsl-typed-buffers",
        _WGSL,
        _DOCS["wgsl-typed-buffers"],
        lambda c: c.src.storage_typed_buffers(),
        lambda src, path, s, plan: rewrite.typed_buffer_edits(s, plan),
    ),
    # the padding's positions are in the text the records before made
    Rewrite(
        "offset-padding",
        NOT_SPIRV,
        _DOCS["offset-padding"],
        lambda c: c.pads,
        _padding,
        reads_edited=True,
        per_target=True,
    ),
)


_KERNEL = "RWStructuredBuffer<float> o;\n[numthreads(1,1,1)] void main() {{ {} }}\n"
# What plain Slang still needs each record for (tests/compiler/test_quirks.py): a record whose
# probe Slang builds (into a valid module) can be retired. A rewrite without one is a DXC
# convention or a layout oneshader chooses, not a gap Slang may close.
_PROBES = {
    "sampler-type": Probe(
        "sampler s;\nTexture2D<float4> t;\n"
        + _KERNEL.format("o[0] = t.SampleLevel(s, float2(0, 0), 0).x;"),
        Target.SpirV,
    ),
    "mutating-methods": Probe(
        "struct C { uint n; void add() { n += 1; } };\n"
        + _KERNEL.format("C c; c.n = 0; c.add(); o[0] = c.n;"),
        Target.SpirV,
    ),
    "void-casts": Probe(_KERNEL.format("float y = 2; (void)y; o[0] = 1;"), Target.SpirV),
    "classes": Probe(
        "class C { float f() { return 1; } };\n" + _KERNEL.format("C c; o[0] = c.f();"),
        Target.SpirV,
    ),
    "space-only-registers": Probe(
        "RWStructuredBuffer<float> p : register(space1);\n" + _KERNEL.format("o[0] = p[0];"),
        Target.SpirV,
    ),
    "register-letters": Probe(
        "Texture2D<float4> t : register(s1);\n" + _KERNEL.format("o[0] = t.Load(int3(0, 0, 0)).x;"),
        Target.SpirV,
    ),
    "one-component-texels": Probe(
        "Texture2D<float1> t;\n" + _KERNEL.format("o[0] = t.Load(int3(0, 0, 0));"), Target.Wgsl
    ),
    "own-name-blocks": Probe(
        "struct U { float x; };\ncbuffer ubo { U ubo; };\n" + _KERNEL.format("o[0] = ubo.x;"),
        Target.SpirV,
    ),
    "load-offsets": Probe(
        "Texture2D<float4> t;\n" + _KERNEL.format("o[0] = t.Load(int3(0, 0, 0), int2(1, 0)).x;"),
        Target.Wgsl,
    ),
    "sixteen-bit-literals": Probe(_KERNEL.format("o[0] = asuint16(1.0);"), Target.SpirV),
    "pack-matrix": Probe(
        "#pragma pack_matrix(row_major)\ncbuffer C { float2x3 m; };\n"
        + _KERNEL.format("o[0] = m[0][0];"),
        Target.SpirV,
        "E15601",
    ),
}
REWRITES = tuple(replace(r, probe=_PROBES.get(r.id)) for r in REWRITES)
# The records of each target, in order (a frozenset's look-up of an enum costs: once a plan).
_FOR_TARGET = {t: tuple(r for r in REWRITES if t in r.targets) for t in Target}


def plan(
    src: SourceSet, target: Target, pads: Collection[Any], stages: Mapping[str, Stage]
) -> Plan:
    """The records that apply to ``target`` in this compile, each with what its edit needs
    (once per read: each request of a target asks again, with the same padding; a record's
    plan that is not ``per_target`` once for every target)."""
    c = Context(src, target, tuple(pads), tuple(stages.items()))

    def planned() -> Plan:
        shared: dict[str, Hashable] = src.derived(("shared plans", c.stages), dict)
        out = []
        for record in _FOR_TARGET[target]:
            if record.per_target:
                value = record.plan(c)
            elif record.id in shared:
                value = shared[record.id]
            else:
                value = shared[record.id] = record.plan(c)
            if value:
                out.append((record.id, value))
        return tuple(out)

    how: Plan = src.derived(("plan", target, c.pads, c.stages), planned)
    return how


def rewritten(src: SourceSet, path: Path, how: Plan) -> str:
    """One file's text for Slang: its text as compiled with every planned record's edits. The
    records' span edits are gathered on one stream and applied together (one pass over the
    text); a record that ``reads_edited`` (or rewrites the whole ``text``) first has the edits
    gathered so far applied and the text lexed again, only where they changed it."""
    planned = dict(how)
    text = src.texts[path]
    stream: Stream | None = None
    last: Stream | None = None  # the stream of the text before the edits made since (lexed
    # again only where they changed a line: ``query.lexed_after``)
    pending: list[tuple[int, int, str, str]] = []
    for record in REWRITES:
        if record.id not in planned:
            continue
        if pending and (record.reads_edited or record.edits is None):
            text, pending, stream = applied(text, pending), [], None
        if record.edits is not None:
            stream = stream or lexed_after(last or lexed(src.texts[path]), text)
            last = stream
            found = _edits(src, path, stream, record, planned[record.id])
            pending += [(a, b, new, record.id) for a, b, new in found]
        elif record.text is not None:
            changed = record.text(src, path, text, planned[record.id])
            stream = None if changed != text else stream
            text = changed
    return applied(text, pending) if pending else text


def _edits(src: SourceSet, path: Path, s: Stream, record: Rewrite, how: Hashable) -> list[Edit]:
    """A record's edits of a file's stream, once a read for each text and plan: the plans of
    the targets differ in a few records, so most records edit the same text for each."""
    assert record.edits is not None
    edits = record.edits
    found: list[Edit] = src.derived(
        ("edits", record.id, path, s.text, how), lambda: edits(src, path, s, how)
    )
    return found


class OverlappingEdits(RuntimeError):
    """Two records' edits of one span: a bug of the registry (the driver's OS9002)."""


def applied(text: str, edits: list[tuple[int, int, str, str]]) -> str:
    """``text`` with the span edits ``(start, end, new, record id)`` made in one pass; edits
    at one offset in the order given. Two that overlap are a bug of the records (they would
    edit what another rewrote): an internal error that names both."""
    order = sorted(edits, key=lambda e: (e[0], e[1]))
    parts: list[str] = []
    at, last = 0, None
    for e in order:
        start, end, new, _ = e
        if last is not None and start < at:
            if e[:3] == last[:3] and end > start:
                continue  # the same edit twice (one span found twice)
            raise OverlappingEdits(
                f"rewrites {last[3]!r} and {e[3]!r} overlap: {last[:2]} and {(start, end)}"
            )
        parts += (text[at:start], new)
        at, last = max(at, end), e
    parts.append(text[at:])
    return "".join(parts)


def preludes(how: Plan) -> list[str]:
    """What the planned records define before the main file, in their ranks' order."""
    planned = dict(how)
    found = [r for r in REWRITES if r.id in planned and r.prelude is not None]
    return [r.prelude(planned[r.id]) for r in sorted(found, key=lambda r: r.rank) if r.prelude]
