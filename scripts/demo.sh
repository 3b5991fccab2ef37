#!/usr/bin/env bash
# Sets everything up, builds the example shaders, generates their bindings and runs the examples.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
oneshader build examples/shaders -o examples/out --bindings examples/generated
python examples/sprite.py
python examples/particles.py
