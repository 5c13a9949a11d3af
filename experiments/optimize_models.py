#!/usr/bin/env python3
"""What the rules and the search do to the shared models, then and now.
Called by experiments/optimize_models.sh (which picks the venv's Python); see
`optimize_models.sh --help` and experiments/README.md.

Per model, two optimizations by `tso optimize --device cpu` (costs measured
on this machine, one shared cost cache): "before", with the rule files
committed at a baseline revision (--baseline, by default the last commit before
lifted rules, grouped convolution specs, fused activations and the lookahead
landed: issue 16) and the lookahead off; and "after", with today's rule files
and search. Both use today's binary, so the frontend's operators (gather, the
exported GELU) count in both. The first table gives the operators and the
applied rewrites by kind; the second the end-to-end latency of the input and
both optimized files on tso's CPU runtime, by the protocol of
../shared/MEASURING.md (cpu_bench.py's timer: one untimed warm-up process
each, then rounds alternating the three files, each a fresh process; the
minimum of the rounds' minimums and the median of their medians).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import cpu_bench
from cpu_bench import ROOT, progress, shown_path

BASELINE = "92c78d1"  # the last commit before issue 16's rules and search
KINDS = [("fuse_activation", "fuse"), ("merge_convolutions", "mconv"), ("merge_matmuls", "mmat"),
         ("fold_batchnorm", "bn"), ("enlarge_kernel", "enl"), ("other", "other")]
SIDES = ("before", "after")
LEGEND = ("ops: operators of the search's best graph; fuse: activations fused; mconv/mmat: "
          "conv/matmul merges; bn: batchnorm folds; enl: kernels enlarged; other: every other "
          "rewrite; wrote: the file written, the optimized graph or the input where the speed "
          "check found the optimized graph no faster")


def parser():
    n = cpu_bench.usable_cpus()
    ap = argparse.ArgumentParser(prog="optimize_models.sh", description=__doc__.split("\n\n")[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", default=BASELINE,
                    help=f"git revision whose substitutions/*.rules make 'before' (default {BASELINE})")
    ap.add_argument("--models", default="", help="comma-separated stems (default: every shared model)")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "..", "shared", "models"))
    ap.add_argument("--tso", default=os.path.join(ROOT, "build", "tso"), help="default build/tso")
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "bench_models"),
                    help="filled models, optimized files and the cost cache (default build/bench_models)")
    ap.add_argument("--no-measure", action="store_true", help="only the rewrites table")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    ap.add_argument("--runs", type=int, default=10, help="timed runs per process (default 10)")
    ap.add_argument("--heavy-runs", type=int, default=5,
                    help="timed runs for nasnetalarge and bert_base_seq128 (default 5)")
    ap.add_argument("--threads", type=int, default=n, help=f"threads of tso run (default {n})")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per process (default 1200)")
    ap.add_argument("--seed", type=int, default=0, help="weights of graph-only models (default 0)")
    ap.add_argument("--out", help="also write the tables as markdown")
    return ap


def options(argv):
    ap = parser()
    a = ap.parse_args(argv)
    if a.rounds < 1 or a.runs < 1 or a.heavy_runs < 1 or a.threads < 1:
        ap.error("--rounds, --runs, --heavy-runs and --threads must be >= 1")
    a.tso, a.cache, a.models_dir = (os.path.abspath(p) for p in (a.tso, a.cache, a.models_dir))
    if not os.path.isfile(a.tso):
        ap.error(f"no tso binary at {a.tso} (build the tso target)")
    if not os.path.isdir(a.models_dir):
        ap.error(f"no models directory {a.models_dir}")
    # What cpu_bench.py's helpers read.
    a.warmup, a.tso_flags, a.optimize_flags = 0, "", ""
    a.no_optimize, a.reoptimize = False, False
    return a, ap


def baseline_rules(rev, into):
    """The paths of substitutions/*.rules at rev, written under into."""
    def git(*args):
        r = subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"optimize_models.sh: git {' '.join(args)}: {cpu_bench.first_line(r.stderr)}")
        return r.stdout
    names = [n for n in git("ls-tree", "--name-only", f"{rev}:substitutions").split()
             if n.endswith(".rules")]
    if not names:
        sys.exit(f"optimize_models.sh: no substitutions/*.rules at {rev}")
    paths = []
    for n in names:
        p = os.path.join(into, n)
        with open(p, "w") as f:
            f.write(git("show", f"{rev}:substitutions/{n}"))
        paths.append(p)
    return paths


def optimize(stem, path, side, old_rules, a):
    """{"path", "report", "seconds"} or {"error"}: side's optimization of path,
    reused while newer than path and the tso binary and made by the same
    command (its record, written last, names the command; the baseline's rule
    files by revision, as their copies live in a scratch folder)."""
    base = os.path.join(a.cache, f"{stem}.{side}")
    out, report, record = base + ".onnx", base + ".json", base + ".run.json"
    cmd = [a.tso, "optimize", path, "-o", out, "--device", "cpu", "--report", report,
           "--cost-cache", os.path.join(a.cache, cpu_bench.COST_CACHE), "-q"]
    if side == "before":
        cmd += ["--lookahead-budget", "0", "--rules", *old_rules]
    key = cmd[:-len(old_rules)] + [f"substitutions/*.rules of {a.baseline}"] if side == "before" else cmd
    newest_input = max(os.path.getmtime(path), os.path.getmtime(a.tso))
    try:
        with open(record) as f:
            rec = json.load(f)
        with open(report) as f:
            rep = json.load(f)
        if rec["command"] == key and all(os.path.getmtime(p) > newest_input for p in (out, report)):
            progress(f"{stem}: reusing {shown_path(out)} (optimized in {rec['seconds']:.1f} s)")
            return {"path": out, "report": rep, "seconds": rec["seconds"]}
    except (OSError, ValueError, KeyError):
        pass  # no usable earlier optimization: run it
    if os.path.exists(record):
        os.remove(record)
    progress(f"{stem}: tso optimize ({side}) -> {shown_path(out)}")
    t = time.monotonic()
    _, err = cpu_bench.run_process(cmd, a.timeout)
    if err:
        return {"error": f"tso optimize ({side}) {err}"}
    try:
        with open(report) as f:
            rep = json.load(f)
        rep["operators"]["after"], rep["classic_rewrites"]["other"], rep["speed_check"]["written"]
    except (OSError, ValueError, KeyError) as e:
        return {"error": f"tso optimize ({side}) wrote no readable report {report}: {e!r}"}
    seconds = time.monotonic() - t
    with open(record, "w") as f:
        json.dump({"command": key, "seconds": seconds}, f)
    return {"path": out, "report": rep, "seconds": seconds}


def timed(stem, files, a):
    """{name: (min, median) or error} over files [(name, path)], alternated."""
    runs = a.heavy_runs if stem in cpu_bench.HEAVY else a.runs
    timers = [(name, lambda n, f=f: cpu_bench.time_tso(f, n, 0, a)) for name, f in files]
    return cpu_bench.alternate(stem, timers, a.rounds, min(runs, 3), runs)


def rewrite_cells(opt):
    if "error" in opt:
        return None
    rep = opt["report"]
    k = rep["classic_rewrites"]
    return ([str(rep["operators"]["after"])] + [str(k[key]) for key, _ in KINDS]
            + [rep["speed_check"]["written"]])


def rewrite_lines(rows, md):
    head = ["model", "ops"] + [f"{s} {c}" for s in SIDES
                               for c in ["ops"] + [h for _, h in KINDS] + ["wrote"]]
    lines = []
    if md:
        lines += ["| " + " | ".join(head) + " |", "| --- " + "| ---: " * (len(head) - 1) + "|"]
    else:
        lines.append(f"{'model':<18}{'ops':>5}  " + "  ".join(
            f"{s + ': ops':>11} " + " ".join(f"{h:>5}" for _, h in KINDS) + f" {'wrote':>9}"
            for s in SIDES))
    for stem, ops_in, opts in rows:
        cells = [rewrite_cells(opts[s]) for s in SIDES]
        errs = "; ".join(opts[s]["error"] for s in SIDES if "error" in opts[s])
        per = len(KINDS) + 2
        flat = [c for side in cells for c in (side or ["-"] * per)]
        if md:
            lines.append(f"| {stem} | {ops_in} | " + " | ".join(flat) + " |"
                         + (f" {errs} |" if errs else ""))
        else:
            lines.append(f"{stem:<18}{ops_in:>5}  " + "  ".join(
                f"{flat[i * per]:>11} " + " ".join(f"{c:>5}" for c in flat[i * per + 1:(i + 1) * per - 1])
                + f" {flat[(i + 1) * per - 1]:>9}" for i in range(2)) + (f"  {errs}" if errs else ""))
    return lines


def speedup(base, other):
    if isinstance(base, tuple) and isinstance(other, tuple):
        return f"{base[0] / other[0]:.3f}", f"{base[1] / other[1]:.3f}"
    return "-", "-"


def timing_lines(rows, md):
    head = ["model", "input min", "input median", "before min", "before median", "after min",
            "after median", "before speedup (min)", "after speedup (min)", "after speedup (median)"]
    lines = []
    if md:
        lines += ["| " + " | ".join(head) + " |", "| --- " + "| ---: " * (len(head) - 1) + "|"]
    else:
        lines.append(f"{'model':<18}" + "".join(f"{h:>14}" for h in head[1:7])
                     + "".join(f"{h.replace(' speedup', ''):>16}" for h in head[7:]))
    for stem, t in rows:
        cells, errs = [], []
        for name in ("input", "before", "after"):
            v = t.get(name, "not optimized")
            if isinstance(v, tuple):
                cells += [f"{v[0]:.2f}", f"{v[1]:.2f}"]
            else:
                cells += ["-", "-"]
                errs.append(f"{name}: {v}")
        b, af = speedup(t.get("input"), t.get("before")), speedup(t.get("input"), t.get("after"))
        cells += [b[0], af[0], af[1]]
        err = "; ".join(errs)
        if md:
            lines.append(f"| {stem} | " + " | ".join(cells) + " |" + (f" {err} |" if err else ""))
        else:
            lines.append(f"{stem:<18}" + "".join(f"{c:>14}" for c in cells[:6])
                         + "".join(f"{c:>16}" for c in cells[6:]) + (f"  {err}" if err else ""))
    return lines


def main():
    a, ap = options(sys.argv[1:])
    models = cpu_bench.find_models(a.models_dir)
    if a.models:
        known = dict(models)
        want = [m.strip() for m in a.models.split(",") if m.strip()]
        unknown = [m for m in want if m not in known]
        if unknown:
            ap.error(f"unknown model(s) {', '.join(unknown)}; {a.models_dir} has "
                     + ", ".join(s for s, _ in models))
        models = [(m, known[m]) for m in want]
    name, logical, _, isa = cpu_bench.cpu_model()
    runs = f"{a.runs} timed runs per process ({', '.join(sorted(cpu_bench.HEAVY))}: {a.heavy_runs})"
    setting = [
        ("date", time.strftime("%Y-%m-%d %H:%M:%S %Z")),
        ("cpu", f"{name}; {logical} logical cores; {' '.join(isa)}"),
        ("tso", f"{shown_path(a.tso)}, source tree {cpu_bench.git_head()}"),
        ("before", f"tso optimize --device cpu --rules <substitutions/*.rules of {a.baseline}> "
                   "--lookahead-budget 0"),
        ("after", "tso optimize --device cpu (today's rule files and search)"),
        ("timing", "none (--no-measure)" if a.no_measure else
                   f"tso run --device cpu --threads {a.threads}: 1 warm-up process per file, then "
                   f"{a.rounds} rounds alternating input, before, after; {runs}"),
        ("load", " ".join(f"{x:.2f}" for x in (cpu_bench.loadavg() or [])) or "unknown"),
        ("command", " ".join(["experiments/optimize_models.sh"] + sys.argv[1:])),
    ]
    for k, v in setting:
        print(f"{k:<8} {v}", flush=True)

    scratch = tempfile.mkdtemp(prefix="optimize_models.")
    old_rules = baseline_rules(a.baseline, scratch)
    os.makedirs(a.cache, exist_ok=True)
    cpu_bench.fresh_cost_cache(a)
    prepared, rewrites = [], []
    for stem, (src, graph_only) in models:
        path, err = cpu_bench.prepared(stem, src, graph_only, a)
        if err:
            opts = {s: {"error": err} for s in SIDES}
        else:
            opts = {s: optimize(stem, path, s, old_rules, a) for s in SIDES}
        ops_in = next((o["report"]["operators"]["before"] for o in opts.values() if "report" in o), "-")
        rewrites.append((stem, ops_in, opts))
        prepared.append((stem, path, opts))
    for p in old_rules:
        os.remove(p)
    os.rmdir(scratch)
    print()
    for l in rewrite_lines(rewrites, md=False):
        print(l)
    print(LEGEND, flush=True)

    timings = []
    if not a.no_measure:
        for stem, path, opts in prepared:
            if path is None:
                continue
            files = [("input", path)] + [(s, opts[s]["path"]) for s in SIDES if "path" in opts[s]]
            t = timed(stem, files, a)
            for s in SIDES:
                if "error" in opts[s]:
                    t[s] = opts[s]["error"]
            timings.append((stem, t))
        print()
        for l in timing_lines(timings, md=False):
            print(l)
        print(f"ms on tso's CPU runtime, {a.threads} threads; speedup = input / optimized")
    if a.out:
        md = [f"# The shared models optimized with the rules and search of {a.baseline} and of today",
              "", "```"]
        md += [f"{k:<8} {v}" for k, v in setting] + ["```", ""] + rewrite_lines(rewrites, md=True)
        md += ["", LEGEND + "."]
        if timings:
            md += ["", "Latency on tso's CPU runtime (ms), speedup = input / optimized:", ""]
            md += timing_lines(timings, md=True)
        with open(a.out, "w") as f:
            f.write("\n".join(md) + "\n")
        print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
