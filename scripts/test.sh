#!/usr/bin/env bash
# Sets everything up, then runs the linters, the type checker and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
ruff check src tests bench examples
ruff format --check src tests bench examples
mypy
python -m pytest "$@"
