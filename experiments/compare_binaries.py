#!/usr/bin/env python3
"""Two tso binaries on the same model files, timed in alternating rounds.

    experiments/compare_binaries.py BEFORE AFTER FILE... [--rounds R] [--iters K]
        [--threads T] [--label-before NAME] [--label-after NAME]

What a runtime change gains, measured as ../shared/MEASURING.md asks: each
run of each binary alone in its own process (`tso run FILE --device cpu
--iters K --threads T`), one untimed warm-up process per binary, then R
rounds alternating BEFORE, AFTER; per file the minimum and the median of the
processes' latencies and their ratios, as a markdown table on stdout. Both
binaries share $XDG_CACHE_HOME (their plan choices are keyed by device, so a
binary of another cost-table tag keeps its own). Progress goes to stderr.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

LATENCY = re.compile(r"latency\s+median ([\d.]+) ms \(min ([\d.]+)")


def timed(binary, path, iters, threads):
    """(median, min) latency in ms of one `tso run` process."""
    cmd = [binary, "run", path, "--device", "cpu", "--iters", str(iters),
           "--threads", str(threads)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    found = LATENCY.search(done.stdout)
    if done.returncode != 0 or not found:
        sys.exit(f"compare_binaries: {' '.join(cmd)} failed:\n{done.stderr.strip()}")
    return float(found.group(1)), float(found.group(2))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--label-before", default="before")
    ap.add_argument("--label-after", default="after")
    a = ap.parse_args()
    for b in (a.before, a.after):
        if not os.access(b, os.X_OK):
            sys.exit(f"compare_binaries: {b}: not an executable")
    lb, la = a.label_before, a.label_after
    print(f"load average at the start: {open('/proc/loadavg').read().split()[:3]}  ")
    print(f"\n| file | {lb} min (ms) | {lb} median (ms) | {la} min (ms) | {la} median (ms) "
          "| speedup min | speedup median |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for path in a.files:
        for b in (a.before, a.after):
            timed(b, path, a.iters, a.threads)
        runs = {a.before: [], a.after: []}
        for r in range(a.rounds):
            print(f"{os.path.basename(path)}: round {r + 1} of {a.rounds}", file=sys.stderr)
            for b in (a.before, a.after):
                runs[b].append(timed(b, path, a.iters, a.threads))
        lo = {b: min(t[1] for t in v) for b, v in runs.items()}
        med = {b: statistics.median(t[0] for t in v) for b, v in runs.items()}
        print(f"| {os.path.basename(path)} | {lo[a.before]:.2f} | {med[a.before]:.2f} "
              f"| {lo[a.after]:.2f} | {med[a.after]:.2f} | {lo[a.before] / lo[a.after]:.2f} "
              f"| {med[a.before] / med[a.after]:.2f} |", flush=True)
    print(f"\nload average at the end: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
