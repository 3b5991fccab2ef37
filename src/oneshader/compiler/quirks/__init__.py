"""The quirk registry: every DXC idiom, Slang work-around and target gap the compiler handles in
the source, one record each (``record.py``): the targets it applies to, what triggers it (a
query on the source model), its edits (``rewrites.py``) or its refusal (``refusals.py``), the
sentence docs/compiler.md shows (generated: ``docs.py``) and a probe that plain Slang still
needs it for (tests/compiler/test_quirks.py fails once Slang no longer does)."""
