#!/usr/bin/env bash
# Create .venv/ in the repository root and install pvf with its dev and ray extras
# (the tests run the Ray backend on a local instance).
# torch is pinned to 2.13.0: on these machines that is a CPU build on local disk
# (an unpinned torch pulls a multi-GB CUDA build).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet "torch==2.13.0"
.venv/bin/python -m pip install --quiet -e ".[dev,ray]"
