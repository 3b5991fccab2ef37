"""HLSL as written, before Slang sees it: the scanner, the source set (main file and includes),
the resource kinds, what a target cannot express (precheck) and the source rewrites."""
