"""The emitted code made to say what the reflection says: binary edits of SPIR-V, text edits of
WGSL and MSL, and the steps the driver calls (:mod:`.apply`)."""
