#!/usr/bin/env bash
# Coverage-guided fuzzing of the native kernels under AddressSanitizer + UndefinedBehavior-
# Sanitizer (atheris: libFuzzer inside). The harnesses are fuzz/*.py (fuzz/harness.py says
# what each checks); docs/reliability.md keeps the campaign's table.
#
#   bash ci/fuzz.sh HARNESS [--runs N] [--time S] [libFuzzer flags…]   one harness
#   bash ci/fuzz.sh --smoke                  every harness for 20 s (CI), two at a time
#   bash ci/fuzz.sh --list                   the harnesses
#   bash ci/fuzz.sh --ubsan HARNESS …        one harness under UBSan alone (twice as fast:
#                                            the campaign's executions beyond the ASan ones)
#   bash ci/fuzz.sh --merge HARNESS          add to fuzz/corpus/HARNESS the fewest inputs of
#                                            the grown corpus that cover what it adds (none
#                                            derived from the peer data)
#
# The kernels are built once, out of the tree (build/fuzz: clang, -fsanitize=address,
# undefined,fuzzer-no-link, so libFuzzer sees their branches; build/fuzz/ubsan without
# address), and run from a copy of the package there (build/fuzz/pkg); the normal build in
# src/ is not touched. New inputs go to
# build/fuzz/work/HARNESS (fuzz/corpus/HARNESS, the committed corpus, and the peer data's
# seeds in build/fuzz/peer/HARNESS are read, never written); a finding stops the run, is saved
# as build/fuzz/findings/HARNESS/crash-…, printed in hex, and the script fails.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
OUT="$ROOT/build/fuzz"
HARNESSES=(ibm lldf debezium olr qlik split catalog hexmask jsonscan)
SMOKE_SECONDS="${CDCFAST_FUZZ_SMOKE_SECONDS:-20}"
MERGE_LEN="${CDCFAST_FUZZ_MERGE_LEN:-2048}"     # bytes: the longest input --merge commits
# libFuzzer's -timeout (s of wall time: a hang). A fuzzer run niced on a busy machine can
# wait that long for a core: raise it there (the harness's own limit counts CPU time)
TIMEOUT="${CDCFAST_FUZZ_TIMEOUT:-10}"
FLAVOR=fuzz                 # the build's CDCFAST_SANITIZE: ASan + UBSan (fuzz-ubsan: UBSan)
BUILD="$OUT"
RUNTIME=asan_with_fuzzer.so
if [ "${1:-}" = "--ubsan" ]; then
    FLAVOR=fuzz-ubsan BUILD="$OUT/ubsan" RUNTIME=ubsan_with_fuzzer.so
    shift
fi

die() { echo "ci/fuzz.sh: $*" >&2; exit 1; }

need_tools() {
    if ! command -v clang-14 >/dev/null && ! command -v clang >/dev/null; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            echo "ci/fuzz.sh: installing clang (Debian's package) for libFuzzer's coverage" >&2
            (apt-get update -q && apt-get install -y -q clang) >/dev/null
        else
            die "clang is needed (apt-get install clang)"
        fi
    fi
    CLANG="$(command -v clang-14 || command -v clang)"
    python -c "import atheris" 2>/dev/null || python -m pip install -q "atheris>=2.3" \
        || die "atheris is needed (pip install atheris)"
    # the build's own tools (pip's isolated build of the package leaves them out of the venv)
    python -c "import Cython, numpy" 2>/dev/null || python -m pip install -q "Cython>=3.0" numpy \
        || die "Cython and numpy are needed to build the kernels"
    ATHERIS_DIR="$(python -c 'import atheris; print(atheris.path())')"
}

build() {
    # rebuilt when a kernel source is newer than the last build (one build at a time)
    local stamp="$BUILD/built"
    mkdir -p "$BUILD"
    exec 9>"$BUILD/build.lock"
    flock 9
    if [ ! -e "$stamp" ] || [ -n "$(find native setup.py -newer "$stamp" -type f \
            \( -name '*.pyx' -o -name '*.pxd' -o -name '*.h' -o -name '*.py' \) | head -1)" ]; then
        echo "ci/fuzz.sh: building the sanitizer kernels into ${BUILD#$ROOT/} (about 2 minutes)" >&2
        # C files the package's build wrote from today's sources need no new Cython run
        # (a Cython just installed here would look newer than them and redo them all)
        for c in native/cdcfast/*.c; do
            if [ "$c" -nt "${c%.c}.pyx" ] && [ -z "$(find native -newer "$c" \( -name '*.pyx' \
                    -o -name '*.pxd' -o -name '*.h' \) | head -1)" ]; then
                touch "$c"
            fi
        done
        CC="$CLANG" LDSHARED="$CLANG -shared" CDCFAST_SANITIZE="$FLAVOR" \
            python setup.py -q build_ext --build-lib "$BUILD/lib" --build-temp "$BUILD/tmp" -j2 \
            > "$BUILD/build.log" 2>&1 || { tail -40 "$BUILD/build.log" >&2
                                           die "the sanitizer build failed"; }
        touch "$stamp"
    fi
    flock -u 9
    # this run's package: its Python from src/ (as it is now), its kernels from the build
    PKG="$OUT/pkg/$$"
    trap 'rm -rf "$PKG"' EXIT
    mkdir -p "$PKG"
    cp -r src/cdcfast "$PKG/"
    find "$PKG" \( -name '*.so' -o -name '__pycache__' \) -prune -exec rm -rf {} +
    cp "$BUILD"/lib/cdcfast/*.so "$PKG/cdcfast/"
}

sanitized() {
    # python under atheris's ASan+UBSan runtime (with libFuzzer), the build's package first
    LD_PRELOAD="$ATHERIS_DIR/$RUNTIME${LD_PRELOAD:+:$LD_PRELOAD}" \
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1:abort_on_error=1:handle_abort=1:malloc_context_size=4}" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}" \
    PYTHONPATH="$PKG:$ROOT/fuzz:$ROOT/tests" CDCFAST_REQUIRE_NATIVE=1 \
        python "$@"
}

show_findings() {
    local dir="$1" found=0
    for f in "$dir"/finding-* "$dir"/crash-* "$dir"/timeout-* "$dir"/oom-* "$dir"/leak-* "$dir"/slow-unit-*; do
        [ -e "$f" ] || continue
        found=1
        echo "=== finding: $f ($(stat -c %s "$f") bytes), the input in hex:" >&2
        python -c 'import sys; d = open(sys.argv[1], "rb").read(); print("\n".join(d[i:i + 48].hex() for i in range(0, len(d), 48)))' "$f" >&2
    done
    return $found
}

max_len_of() {
    # inputs of a few messages: longer ones cost time per execution and find little more
    case "$1" in split|catalog) echo 16384 ;; *) echo 4096 ;; esac
}

merge_one() {
    local h="$1" into="$OUT/merge/$h"
    [ -f "fuzz/$h.py" ] || die "no harness fuzz/$h.py (bash ci/fuzz.sh --list)"
    [ -d "$OUT/work/$h" ] || die "no grown corpus in build/fuzz/work/$h (run the harness first)"
    rm -rf "$into" "$into.grown"
    mkdir -p "$into"
    cp fuzz/corpus/"$h"/* "$into"/
    # (a copy: a fuzzer still running on the grown corpus deletes the inputs it reduces)
    cp -r "$OUT/work/$h" "$into.grown"
    # libFuzzer's merge: the inputs of the grown corpus that add coverage to the committed
    # one (the fewest that do), each run through the harness's checks once more; cut to
    # MERGE_LEN bytes (libFuzzer keeps what the cut input covers), so that the committed
    # corpus stays small
    CDCFAST_FUZZ_LIMITS=0 sanitized "fuzz/$h.py" -merge=1 -max_len="$MERGE_LEN" \
        -timeout="$TIMEOUT" -rss_limit_mb=3072 "$into" "$into.grown" > "$OUT/merge-$h.log" 2>&1 \
        || { tail -40 "$OUT/merge-$h.log" >&2; die "$h: the merge failed"; }
    grep -E '^MERGE-OUTER: [0-9]+ new files' "$OUT/merge-$h.log" || true
    PYTHONPATH="$ROOT/fuzz:$ROOT/tests" python fuzz/seeds.py --adopt "$h" "$into"
}

run_one() {
    local h="$1"; shift
    [ -f "fuzz/$h.py" ] || die "no harness fuzz/$h.py (bash ci/fuzz.sh --list)"
    local args=()
    while [ "$#" -gt 0 ]; do
        case "$1" in
            --runs) args+=("-runs=$2"); shift 2 ;;
            --time) args+=("-max_total_time=$2"); shift 2 ;;
            *) args+=("$1"); shift ;;
        esac
    done
    local work="$OUT/work/$h" found="$OUT/findings/$h"
    mkdir -p "$work" "$found" "fuzz/corpus/$h"
    if [ ! -d "$OUT/peer/$h" ] && [ -d ../shared/peer-data ]; then
        PYTHONPATH="$ROOT/fuzz:$ROOT/tests" python fuzz/seeds.py "$h" >/dev/null
    fi
    local corpus="fuzz/corpus/$h"
    if [ -n "${SMOKE:-}" ]; then
        # the smoke run starts from the seeds and regression inputs alone: loading what the
        # campaign grew would take most of its 20 s (tests/test_fuzz_corpus.py replays it all)
        corpus="$OUT/smoke-corpus/$h"
        rm -rf "$corpus"
        mkdir -p "$corpus"
        find "$ROOT/fuzz/corpus/$h" -maxdepth 1 -type f ! -name 'grown-*' -print0 \
            | xargs -0 -r cp -t "$corpus/"
    fi
    local dirs=("$work" "$corpus")
    [ -d "$OUT/peer/$h" ] && dirs+=("$OUT/peer/$h")
    local rc=0
    sanitized "fuzz/$h.py" -timeout="$TIMEOUT" -rss_limit_mb=3072 -malloc_limit_mb=1024 \
        -max_len="$(max_len_of "$h")" -print_final_stats=1 -artifact_prefix="$found/" "${args[@]}" \
        "${dirs[@]}" || rc=$?
    if ! show_findings "$found" || [ "$rc" -ne 0 ]; then
        die "$h: a finding (exit $rc): see above and $found"
    fi
}

case "${1:-}" in
    ""|-h|--help) sed -n '2,22p' "$0"; exit 2 ;;
    --list) printf '%s\n' "${HARNESSES[@]}"; exit 0 ;;
esac
need_tools
mkdir -p "$OUT"
build
if [ "$1" = "--smoke" ]; then
    # two harnesses at a time (2 cores): about 10 × 20 s / 2 plus the build
    SMOKE=1
    fail=0
    for ((i = 0; i < ${#HARNESSES[@]}; i += 2)); do
        pids=()
        for h in "${HARNESSES[@]:i:2}"; do
            run_one "$h" -max_total_time="$SMOKE_SECONDS" > "$OUT/smoke-$h.log" 2>&1 &
            pids+=("$!:$h")
        done
        for p in "${pids[@]}"; do
            if wait "${p%%:*}"; then
                echo "fuzz smoke ${p#*:}: $(grep -E '^stat::number_of_executed_units' \
                    "$OUT/smoke-${p#*:}.log" | awk '{print $2}') executions, no finding"
            else
                fail=1
                echo "fuzz smoke ${p#*:}: FAILED" >&2
                tail -80 "$OUT/smoke-${p#*:}.log" >&2
            fi
        done
    done
    exit $fail
fi
if [ "$1" = "--merge" ]; then
    shift
    for h in "$@"; do
        merge_one "$h"
    done
    exit 0
fi
run_one "$@"
