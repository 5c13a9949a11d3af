#!/usr/bin/env python3
"""Projects `tso generate` at N=5 from what it printed at N=3 and N=4.

    generator/project_n5.py N3.txt N4.txt [--node-memory-gib 64,128,256,512]

Each file is the standard output of one `tso generate` run (one process or a
job under mpirun) over the same operator set. Model, all from the two runs:

- graphs by operator count: the growth ratio from depth k-1 to k rose
  (about linearly) with k, so depth 5 grows by the depth-4 ratio plus its
  last increase; graphs visited but not recorded (not first-use order) grow
  with the depth-4 graphs by their N=4 / N=3 factor times the same rise;
- each later stage keeps the fraction of the stage before it that it kept at
  N=4, times the change of that fraction from N=3 to N=4 (geometric);
- each stage's time scales with its input count at the N=4 rate (thread
  seconds: wall seconds times threads times ranks), except `implied`, whose
  work per candidate grows with the rules kept: it scales with both;
- memory: 32 bytes a record; a rank without a budget peaks at the N=4 run's
  peak RSS per record owned; with --memory-budget records go to disk
  (part files and sorted runs: twice the records' bytes at most).
"""
import argparse
import math
import re
import sys

STAGES = [
    ("fingerprints", "fingerprints"),
    ("candidate pairs", "candidates"),
    ("common subgraph", "common"),
    ("values agree", "values"),
    ("renaming", "renaming"),
    ("bindable", "bindable"),
    ("independent parts", "independent"),
    ("double re-test", "double"),
    ("implied", "implied"),
]


def parse(path):
    text = open(path).read()
    run = {"path": path}
    m = re.search(r"max-ops (\d+)", text)
    if not m:
        sys.exit(f"{path}: not the output of `tso generate` (no 'max-ops N')")
    run["n"] = int(m.group(1))
    run["ops"] = re.search(r", ops (\S+)", text).group(1)
    run["not_first_use"] = int(re.search(r"not first-use order\s+(\d+)", text).group(1))
    m = re.search(r"graphs enumerated\s+(\d+) \(([^)]*)\)", text)
    run["graphs"] = int(m.group(1))
    run["by_ops"] = [int(x.split(":")[1]) for x in m.group(2).split(",")]
    for label, key in STAGES:
        run[key] = int(re.search(rf"^{label}\s+(\d+)", text, re.M).group(1))
    seconds = re.search(r"^seconds:(.*)$", text, re.M).group(1)
    run["seconds"] = {}
    for part in seconds.split(","):
        name, secs = part.strip().rsplit(" ", 1)
        run["seconds"][name] = float(secs)
    threads = re.search(r"(\d+) threads", text)
    run["threads"] = int(threads.group(1)) if threads else 1
    ranks = re.search(r"job: (\d+) ranks", text)
    run["ranks"] = int(ranks.group(1)) if ranks else 1
    owned = [(float(a), int(b)) for a, b in
             re.findall(r"peak RSS (\d+) MiB, (\d+) records owned", text)]
    single = re.search(r"peak RSS (\d+) MiB, \d+ threads", text)
    if owned:
        run["rss_per_record"] = max(mib * 2**20 / max(n, 1) for mib, n in owned)
    else:
        run["rss_per_record"] = float(single.group(1)) * 2**20 / run["graphs"]
    return run


def thread_seconds(run, step):
    return run["seconds"].get(step, 0.0) * run["threads"] * run["ranks"]


def human(x):
    for unit in ["", "K", "M", "G", "T", "P"]:
        if abs(x) < 1000:
            return f"{x:.3g}{unit}"
        x /= 1000
    return f"{x:.3g}E"


def gib(b):
    return f"{b / 2**30:,.0f} GiB"


def project(n3, n4):
    d3, d4 = n3["by_ops"], n4["by_ops"]
    ratios = [d4[k] / d4[k - 1] for k in range(2, len(d4))]
    rise = ratios[-1] - ratios[-2] if len(ratios) > 1 else 0.0
    r5 = ratios[-1] + rise
    depth5 = d4[-1] * r5
    p = {"by_ops": d4 + [depth5], "graphs": sum(d4) + depth5}
    p["not_first_use"] = n4["not_first_use"] * (n4["not_first_use"] / n3["not_first_use"]) * (
        r5 / ratios[-1])
    prev3, prev4, prev5 = n3["graphs"], n4["graphs"], p["graphs"]
    for _, key in STAGES:
        f3, f4 = n3[key] / max(prev3, 1), n4[key] / max(prev4, 1)
        f5 = min(1.0, f4 * (f4 / f3)) if f3 > 0 else f4
        p[key] = prev5 * f5
        prev3, prev4, prev5 = n3[key], n4[key], p[key]
    # Thread seconds per step.
    visited4 = n4["graphs"] + n4["not_first_use"]
    visited5 = p["graphs"] + p["not_first_use"]
    inputs = {"enumerate": ("visited", visited4, visited5),
              "exchange": ("graphs", n4["graphs"], p["graphs"]),
              "pair": ("graphs", n4["graphs"], p["graphs"]),
              "common subgraph": ("candidates", n4["candidates"], p["candidates"]),
              "values": ("common", n4["common"], p["common"]),
              "renaming": ("values", n4["values"], p["values"]),
              "bindable": ("renaming", n4["renaming"], p["renaming"]),
              "independent": ("bindable", n4["bindable"], p["bindable"]),
              "double re-test": ("independent", n4["independent"], p["independent"]),
              "write": ("implied", n4["implied"], p["implied"])}
    steps = []
    for step, (what, c4, c5) in inputs.items():
        t4 = thread_seconds(n4, step)
        steps.append((step, what, t4, t4 * c5 / max(c4, 1)))
    t4 = thread_seconds(n4, "implied")
    steps.append(("implied", "double x implied", t4,
                  t4 * (p["double"] / n4["double"]) * (p["implied"] / n4["implied"])))
    p["steps"] = steps
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n3")
    ap.add_argument("n4")
    ap.add_argument("--node-memory-gib", default="64,128,256,512")
    a = ap.parse_args()
    n3, n4 = parse(a.n3), parse(a.n4)
    if (n3["n"], n4["n"]) != (3, 4) or n3["ops"] != n4["ops"]:
        sys.exit("give the N=3 and the N=4 output of one operator set")
    p = project(n3, n4)
    print(f"tso generate over {n4['ops']}: measured N=3 ({a.n3}), N=4 ({a.n4}); projected N=5\n")
    print(f"{'stage':<22}{'N=3':>14}{'N=4':>14}{'N=5 (projected)':>18}")
    rows = [("not first-use order", "not_first_use"), ("graphs", "graphs")] + STAGES
    for label, key in rows:
        print(f"{label:<22}{n3[key]:>14,}{n4[key]:>14,}{p[key]:>18,.0f}")
    print("graphs by ops (N=5): " + ", ".join(human(x) for x in p["by_ops"]))
    print(f"\n{'step':<18}{'scales with':<18}{'N=4 thread-s':>14}{'N=5 thread-h':>14}")
    total = 0.0
    for step, what, t4, t5 in p["steps"]:
        total += t5
        print(f"{step:<18}{what:<18}{t4:>14.1f}{t5 / 3600:>14.1f}")
    print(f"{'total':<36}{sum(s[2] for s in p['steps']):>14.1f}{total / 3600:>14.1f}")
    records = p["graphs"] * 32
    print(f"\nrecords: {gib(records)} (32 bytes a graph); on disk with a budget: "
          f"at most {gib(2 * records)} (part files and runs)")
    per_record = n4["rss_per_record"]
    print(f"memory without a budget: {per_record:.0f} bytes of peak RSS per record a rank owns "
          f"(measured at N=4, {n4['ranks']} rank(s))")
    print(f"\n{'memory per node':<18}{'ranks (no budget)':>20}{'rank-hours':>12}{'wall h at that R':>18}")
    threads = n4["threads"]
    for m in (float(x) for x in a.node_memory_gib.split(",")):
        ranks = max(1, math.ceil(p["graphs"] * per_record / (m * 2**30)))
        rank_hours = total / threads / 3600
        print(f"{m:>10.0f} GiB{ranks:>24}{rank_hours:>12.1f}{rank_hours / ranks:>18.2f}")
    print(f"\n(rank-hours for ranks of {threads} threads, as measured; the enumeration splits "
          "over first-operator shards and the later steps by key, so wall time falls about "
          "as 1/R while shards outnumber ranks)")


if __name__ == "__main__":
    main()
