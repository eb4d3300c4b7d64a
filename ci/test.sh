#!/usr/bin/env bash
# The README's test command, verbatim: install with the test extras (which compiles the
# Cython kernels), then run the whole suite with the native kernels required.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -e ".[test]" && CDCFAST_REQUIRE_NATIVE=1 python -m pytest -q
