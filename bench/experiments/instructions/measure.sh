#!/bin/bash
# Instructions, branches and time of one single-core decode per format (see README.md).
#   bash measure.sh ibm-delimited lldf debezium olr qlik
set -euo pipefail
cd "$(dirname "$0")"
PY=$(python -c 'import sys; print(sys.executable)')     # the interpreter itself, not a shim
export OPENBLAS_NUM_THREADS=1
gcc -O2 -o clock clock.c
./clock | tail -3 > clock.txt
for f in "$@"; do
    [ -f "$f.pkl" ] || python case.py "$f"
    # one decode's counts: a run of two decodes less a run of one (import, load, warm-up cancel)
    for n in 1 2; do
        valgrind --tool=cachegrind --cache-sim=no --branch-sim=yes \
            --cachegrind-out-file="$f.$n.cg" "$PY" decode.py "$f" "$n" > /dev/null 2>&1
    done
    cg_diff "$f.1.cg" "$f.2.cg" > "$f.cg" 2> /dev/null
    cg_annotate --auto=no "$f.cg" > "$f.fn" 2> /dev/null
    rm -f "$f.1.cg" "$f.2.cg"
    # time and where it goes: cpu-clock samples (the only event this VM has)
    "$PY" decode.py "$f" 15 --time | tee "$f.speed"
    perf record -q -F 1999 -o "$f.perf" "$PY" decode.py "$f" 25 > /dev/null 2>&1
    perf report -i "$f.perf" --no-children --sort symbol --stdio 2> /dev/null \
        | grep -E '^ +[0-9.]+%' > "$f.perfrep"
done
python table.py "$@"
