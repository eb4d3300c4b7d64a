#!/usr/bin/env bash
# Runs CMD… with the sanitizer runtimes the kernels of a CDCFAST_SANITIZE=1 build need:
#
#   CDCFAST_SANITIZE=1 python -m pip install -e . --no-build-isolation   # or build_ext --inplace
#   bash ci/sanitize.sh python -m pytest -q tests/test_apply.py
#
# Python itself is not built with AddressSanitizer, so its runtime must be the first library
# loaded (LD_PRELOAD); leaks are not reported (the interpreter keeps memory to its exit on
# purpose); the first error of either sanitizer stops the process with its report.
#
# Only Python gets that runtime. `ps` hangs with it preloaded (a futex wait in its start: Spark's
# launch scripts call it, so pyspark's gateway never came up), and Java must not have it
# either: shims first on PATH and in JAVA_HOME drop LD_PRELOAD for them, and PYSPARK_PYTHON,
# the Python the JVM starts its workers with, is a shim that restores it. So the Spark tests
# run too.
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
PRELOAD="$ASAN_LIB:$UBSAN_LIB${LD_PRELOAD:+:$LD_PRELOAD}"

SHIM="$(mktemp -d "${TMPDIR:-/tmp}/cdcfast-sanitize.XXXXXX")"
trap 'rm -rf "$SHIM"' EXIT
mkdir -p "$SHIM/bin"
for tool in ps; do
    if command -v "$tool" >/dev/null; then
        printf '#!/bin/sh\nunset LD_PRELOAD\nexec "%s" "$@"\n' "$(command -v "$tool")" \
            > "$SHIM/bin/$tool"
        chmod +x "$SHIM/bin/$tool"
    fi
done
export PATH="$SHIM/bin:$PATH"
if command -v java >/dev/null || [ -n "${JAVA_HOME:-}" ]; then
    REAL_JAVA="${JAVA_HOME:+$JAVA_HOME/bin/java}"
    REAL_JAVA="${REAL_JAVA:-$(readlink -f "$(command -v java)")}"
    mkdir -p "$SHIM/java/bin"
    printf '#!/bin/sh\nunset LD_PRELOAD\nexec "%s" "$@"\n' "$REAL_JAVA" > "$SHIM/java/bin/java"
    export JAVA_HOME="$SHIM/java"
fi
WORKER_PYTHON="${PYSPARK_PYTHON:-$(command -v python || command -v python3)}"
printf '#!/bin/sh\nLD_PRELOAD="%s" exec "%s" "$@"\n' "$PRELOAD" "$WORKER_PYTHON" > "$SHIM/python"
chmod +x "$SHIM/python"
[ ! -e "$SHIM/java/bin/java" ] || chmod +x "$SHIM/java/bin/java"
export PYSPARK_PYTHON="$SHIM/python"

export LD_PRELOAD="$PRELOAD"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
"$@"
