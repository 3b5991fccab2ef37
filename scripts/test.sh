#!/usr/bin/env bash
# Sets everything up, then runs the linters, the type checker and the whole test suite; then the
# build's tests once more on the portable process path (spawned workers, as on macOS and Windows:
# docs/build.md), forced here on Linux so that it is tested.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
ruff check src tests bench examples
ruff format --check src tests bench examples
mypy
python -m pytest "$@"
if [ "$#" -eq 0 ]; then
    ONESHADER_PROCESS=spawn python -m pytest tests/buildtask tests/compiler/test_spawned.py
fi
