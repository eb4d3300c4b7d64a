#!/usr/bin/env bash
# The README's test command, verbatim: install with the test extras (which compiles the
# Cython kernels), then run the whole suite with the native kernels required.
#
# In CI (CI=true) the project's shared folder must sit beside the repository (../shared, with
# SPEC.md, seeds/ and peer-data/): the tests that read it would otherwise skip, so CI stops
# here instead, and CDCFAST_REQUIRE_SHARED=1 makes any test that still cannot find a file of
# it fail rather than skip (tests/conftest.py, shared_path). Outside CI those tests skip and
# say why (pytest -rs; the suite's addopts report skips).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${CI:-}" = "true" ]; then
    for need in ../shared/SPEC.md ../shared/seeds ../shared/peer-data; do
        if [ ! -e "$need" ]; then
            echo "ci/test.sh: $need is missing: CI runs the tests that need the project's shared folder beside the repository (../shared with SPEC.md, seeds/, peer-data/)" >&2
            exit 1
        fi
    done
    export CDCFAST_REQUIRE_SHARED=1
fi
python -m pip install -e ".[test]" && CDCFAST_REQUIRE_NATIVE=1 python -m pytest -q
