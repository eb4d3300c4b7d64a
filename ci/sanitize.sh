#!/usr/bin/env bash
# Runs CMD… with the sanitizer runtimes the kernels of a CDCFAST_SANITIZE=1 build need:
#
#   CDCFAST_SANITIZE=1 python -m pip install -e . --no-build-isolation   # or build_ext --inplace
#   bash ci/sanitize.sh python -m pytest -q tests/test_apply.py
#
# Python itself is not built with AddressSanitizer, so its runtime must be the first library
# loaded (LD_PRELOAD); leaks are not reported (the interpreter keeps memory to its exit on
# purpose); the first error of either sanitizer stops the process with its report.
set -euo pipefail
if [ "$#" -eq 0 ]; then
    echo "usage: ci/sanitize.sh CMD [ARG...]" >&2
    exit 2
fi
ASAN_LIB="$(gcc -print-file-name=libasan.so)"
UBSAN_LIB="$(gcc -print-file-name=libubsan.so)"
for lib in "$ASAN_LIB" "$UBSAN_LIB"; do
    if [ ! -e "$lib" ]; then
        echo "ci/sanitize.sh: $lib not found (gcc's sanitizer runtimes: apt-get install gcc)" >&2
        exit 1
    fi
done
export LD_PRELOAD="$ASAN_LIB:$UBSAN_LIB${LD_PRELOAD:+:$LD_PRELOAD}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
exec "$@"
