#!/usr/bin/env bash
# The README's test command, verbatim: install with the test extras (which compiles the
# Cython kernels), then run the whole suite with the native kernels required.
#
# In CI (CI=true) the project's shared folder must sit beside the repository (../shared, with
# SPEC.md, seeds/ and peer-data/): the tests that read it would otherwise skip, so CI stops
# here instead, and CDCFAST_REQUIRE_SHARED=1 makes any test that still cannot find a file of
# it fail rather than skip (tests/conftest.py, shared_path). Outside CI those tests skip and
# say why (pytest -rs; the suite's addopts report skips); so do the browser tests on a
# machine without Chromium.
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
    # the report's browser tests (tests/test_report_browser.py) run Chromium: Debian's
    # package, installed when the machine lacks it; CDCFAST_REQUIRE_BROWSER=1 makes a
    # missing browser fail those tests rather than skip them
    if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
        echo "ci/test.sh: installing Debian's chromium for the report's browser tests" >&2
        SUDO=""
        [ "$(id -u)" = 0 ] || SUDO="sudo"
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium > /dev/null
    fi
    export CDCFAST_REQUIRE_BROWSER=1
fi
python -m pip install -e ".[test]" && CDCFAST_REQUIRE_NATIVE=1 python -m pytest -q
