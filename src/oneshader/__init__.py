"""oneshader: write a shader once in HLSL, ship SPIR-V, MSL and WGSL with bindings that agree.

Parts, in the direction data flows: ``compiler`` (the only Slang-aware code) produces a
``reflection.ShaderReflection``; ``reflection`` writes and reads it as a file; ``codegen`` turns
reflection files into Python modules; ``bindings`` is what those modules use at run time; ``build``
drives the compiler over a project. Only ``compiler`` and ``build`` may load the compiler.
"""

__version__ = "0.1.0"
