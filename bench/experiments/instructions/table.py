"""Join cachegrind's counts (FORMAT.fn) with perf's time shares (FORMAT.perfrep), the best
MB/s (FORMAT.speed) and the measured clock (clock.txt): per format its cycles, instructions
and branches per byte and IPC; per top function its share of time and of instructions, and
the IPC that implies. usage: python table.py FORMAT..."""
import collections
import re
import statistics
import sys


def plain(name):
    """One name per function: gcc's clones and glibc's variants folded."""
    name = re.sub(r"\.(constprop|isra|part)\.\d+$", "", name)
    name = re.sub(r"^(__mem\w+?)_(evex|avx2|avx|avx512|sse2).*$", r"\1", name)
    return "__memmove" if name == "__memcpy" else name      # (one function in glibc)


ghz = statistics.median(float(x.split()[0]) for x in open("clock.txt"))
print(f"clock: {ghz:.2f} GHz (a chain of dependent adds, clock.c)")
for fmt in sys.argv[1:]:
    speed = open(f"{fmt}.speed").read().split()
    nbytes, mbps = int(speed[1]), float(speed[-2])
    instr = collections.Counter()
    tot = None
    row = re.compile(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+([\d,]+) \(\s*[\d.]+%\)\s+([\d,]+) "
                     r"\(\s*[\d.]+%\)\s+([\d,]+).*?(\S+)$")
    for line in open(f"{fmt}.fn"):
        m = row.match(line)
        if not m:
            continue
        counts = [int(m.group(g).replace(",", "")) for g in range(1, 5)]
        if m.group(5) == "TOTALS":
            tot = counts
        else:
            instr[plain(m.group(5).split(":")[-1])] += counts[0]
    share = collections.Counter()
    for line in open(f"{fmt}.perfrep"):
        m = re.match(r"\s*([\d.]+)%\s+\[.\]\s+(\S+)", line)
        if m:
            share[plain(m.group(2))] += float(m.group(1)) / 100
    cpb = ghz * 1e3 / mbps
    ipb = tot[0] / nbytes
    print(f"\n{fmt}: {mbps:.0f} MB/s, {cpb:.2f} cycles/B, {ipb:.2f} instructions/B, "
          f"IPC {ipb / cpb:.2f}, branches/B {tot[1] / nbytes:.2f}, simulated mispredicts "
          f"per KB {1000 * tot[2] / nbytes:.0f}, indirect calls per KB {1000 * tot[3] / nbytes:.0f}")
    for name, s in share.most_common(12):
        i = instr.get(name, 0) / tot[0]
        print(f"  {100 * s:5.1f} % of time  {100 * i:5.1f} % of instructions  "
              f"IPC {ipb / cpb * i / s:4.1f}  {name}")
