"""The reflection built from every target's facts: placement of bindings (DXC's policy), one
layout per buffer, portability between targets, resources, push blocks, spec constants, entry
points."""
