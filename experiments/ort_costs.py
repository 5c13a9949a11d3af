#!/usr/bin/env python3
"""Optimize a model for ONNX Runtime: measure its operator costs in ONNX Runtime's CPU provider.

    experiments/ort_costs.py MODEL -o TABLE.json [--threads T] [--runs K] [--warmup W]
        [--random-weights S] [--tso build/tso] [--rounds N] [--optimize OUT.onnx]
        [--check-rounds R]

Writes the cost table (runtime/common/cost_table.h) that `tso optimize --cost
TABLE.json` reads, with the costs of every operator signature the search asks
about for MODEL, measured in ONNX Runtime. Starts from TABLE.json when it
exists (refused, naming the file, when it is not a cost table or was measured
under another device string), otherwise from an empty table; then, round
after round (at most N, default 4):

  1. `tso optimize MODEL --cost TABLE.json --missing-costs DIR`: the search,
     with every signature the table lacks written as a one-operator ONNX model
     (DIR/index.json; the model's own operators and the ones rewrites invent:
     merged convolutions, concatenated weights, enlarged kernels);
  2. each of them timed in ONNX Runtime (the session settings of ort_time.py:
     CPUExecutionProvider, ORT_ENABLE_ALL, intra_op_num_threads T,
     inter_op_num_threads 1, sequential) on seeded random inputs: W untimed
     runs, then K runs, each costing the sum of the kernel times ONNX
     Runtime's profiler records for it, without the layout reorders
     (ReorderInput, ReorderOutput) at the one-operator model's boundary, which
     a model's neighbouring operators do not pay;
  3. the entries added (median and minimum of the K runs; kernel
     "onnxruntime: <operators run>") and the table written atomically;

until a search finds nothing missing. A signature ONNX Runtime cannot run, or
tso cannot export, is reported, skipped and not tried again (the search falls
back to the analytic model for it). The device string is "onnxruntime
<version> CPUExecutionProvider, <cpu model>, T threads".

With --optimize OUT.onnx, the optimized model of the final table is timed
against MODEL end to end in ONNX Runtime (ort_time.py, each configuration in
its own process, alternating for R rounds, minimum over rounds) and the faster
one is written to OUT, saying which and why.

A graph-only MODEL (external data missing) needs --random-weights S: it is
filled once by fill_weights.py (the copy cpu_bench.sh uses,
build/bench_models/<model>.seed<S>.onnx, reused while newer than MODEL).
Progress goes to stderr, the summary to stdout.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types

import onnx
import onnxruntime as ort
from onnx.external_data_helper import uses_external_data

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from cpu_bench import cpu_model, first_line, loadavg, prepared  # noqa: E402
from ort_time import make_inputs  # noqa: E402

ORT_TIME = os.path.join(HERE, "ort_time.py")
TABLE_FORMAT, TABLE_VERSION = "tso-cost-table", 1
INDEX_FORMAT, INDEX_VERSION = "tso-signature-models", 1
# Layout changes ONNX Runtime puts around a one-operator model's NCHWc kernel.
BOUNDARY_OPS = {"ReorderInput", "ReorderOutput"}
ORT_LINE = re.compile(r"^ort min_ms=([0-9.]+) median_ms=([0-9.]+) runs=\d+\s*$", re.M)
PREDICTED = re.compile(r"^predicted cost\s+([0-9.]+) us -> ([0-9.]+) us", re.M)

T0 = time.monotonic()


class Failure(Exception):
    """A user-facing error: printed as one line, exit code 1 (2 for bad input)."""

    def __init__(self, message, code=1):
        super().__init__(message)
        self.code = code


def progress(msg):
    print(f"[{time.monotonic() - T0:7.1f}s] {msg}", file=sys.stderr, flush=True)


def device_string(threads):
    return (f"onnxruntime {ort.__version__} CPUExecutionProvider, {cpu_model()[0]}, "
            f"{threads} thread{'' if threads == 1 else 's'}")


# -------------------------------------------------------------- the table
def empty_table(device):
    return {"format": TABLE_FORMAT, "version": TABLE_VERSION, "device": device, "tf32": False,
            "model": "", "entries": []}


def load_table(path, device):
    """The table at `path`, or an empty one when there is none. A file that is
    not a cost table of this format, or was measured under another device
    string, is refused naming it: never mixed."""
    if not os.path.exists(path):
        return empty_table(device)
    try:
        with open(path) as f:
            t = json.load(f)
    except (OSError, ValueError) as e:
        raise Failure(f"{path}: not a readable cost table ({e})", 2)
    if not isinstance(t, dict) or t.get("format") != TABLE_FORMAT:
        fmt = t.get("format") if isinstance(t, dict) else type(t).__name__
        raise Failure(f"{path}: not a tso cost table (format is {json.dumps(fmt)})", 2)
    if t.get("version") != TABLE_VERSION:
        raise Failure(f"{path}: cost table version {json.dumps(t.get('version'))} is not the "
                      f"supported {TABLE_VERSION}", 2)
    if t.get("device") != device:
        raise Failure(f"{path}: measured under another device ({json.dumps(t.get('device'))}), "
                      f"not {json.dumps(device)}; name another table", 2)
    fields = {"signature": str, "op": str, "kernel": str, "median_ms": (int, float),
              "min_ms": (int, float), "samples": int, "occurrences": int}
    entries = t.get("entries")
    if not isinstance(entries, list) or not all(
            isinstance(e, dict) and all(isinstance(e.get(k), ty) for k, ty in fields.items())
            for e in entries):
        raise Failure(f"{path}: malformed cost table (every entry needs "
                      f"{', '.join(fields)})", 2)
    return t


def write_table(table, path):
    """Sorted by signature, as tso writes tables; the file appears only whole."""
    table["entries"].sort(key=lambda e: e["signature"])
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(table, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


# ------------------------------------------------------ timing in ORT
def session_options(threads):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    return so


def run_kernel_times(events, warmup):
    """Per timed run, (milliseconds of its kernels without boundary reorders,
    the operators run) from an ORT profile; the first `warmup` runs dropped."""
    runs = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                  if e.get("cat") == "Session" and e.get("name") == "model_run")
    if len(runs) <= warmup:
        raise ValueError(f"the profile holds {len(runs)} runs, expected more than {warmup}")
    kernels = [e for e in events
               if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time")]
    out = []
    for start, end in runs[warmup:]:
        ms, ops = 0.0, []
        for e in kernels:
            op = e.get("args", {}).get("op_name", "?")
            if start <= e["ts"] <= end and op not in BOUNDARY_OPS:
                ms += e["dur"] / 1e3
                ops.append(op)
        out.append((ms, ops))
    return out


def time_model(path, threads, runs, warmup, seed, scratch):
    """(median_ms, min_ms, kernel) of the one-operator model at `path`."""
    so = session_options(threads)
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(scratch, "profile")
    session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    try:
        feeds = make_inputs(session, seed)
        for _ in range(warmup + runs):
            session.run(None, feeds)
    finally:
        profile = session.end_profiling()
        del session  # one session alive at a time (MEASURING.md)
    try:
        with open(profile) as f:
            times = run_kernel_times(json.load(f), warmup)
    finally:
        os.remove(profile)
    ms = [t for t, _ in times]
    ops = sorted(set(times[0][1]))
    kernel = "onnxruntime: " + (" + ".join(ops) if ops else "nothing (folded at load)")
    return statistics.median(ms), min(ms), kernel


# ------------------------------------------------------------ tso
def tso_optimize(a, model, out, table_path, missing_dir=None):
    """`tso optimize` with the table; its stdout. The speed check on tso's own
    runtime is off: this script checks in ONNX Runtime."""
    cmd = [a.tso, "optimize", model, "-o", out, "--cost", table_path, "--no-verify-speed", "-q"]
    if missing_dir:
        cmd += ["--missing-costs", missing_dir]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise Failure(f"tso optimize exit {r.returncode}: "
                      + (first_line(r.stderr) or first_line(r.stdout) or "(no output)"))
    return r.stdout


def read_index(missing_dir):
    path = os.path.join(missing_dir, "index.json")
    with open(path) as f:
        index = json.load(f)
    if index.get("format") != INDEX_FORMAT or index.get("version") != INDEX_VERSION:
        raise Failure(f"{path}: not a tso signature index of version {INDEX_VERSION}")
    return index


def predicted(stdout):
    m = PREDICTED.search(stdout)
    return f"{m.group(1)} us -> {m.group(2)} us" if m else "?"


def measure_round(a, n, model, table, skipped, scratch):
    """One round: the search, then every missing signature timed and added.
    Returns (signatures measured, the search's prediction)."""
    missing_dir = os.path.join(scratch, f"round{n}")
    t = time.monotonic()
    out = tso_optimize(a, model, os.path.join(scratch, "optimized.onnx"), a.output, missing_dir)
    index = read_index(missing_dir)
    for f in index["not_exported"]:
        if f["signature"] not in skipped:
            skipped[f["signature"]] = "not exportable: " + f["reason"]
            progress(f"round {n}: skipped {f['signature']}: not exportable: {f['reason']}")
    todo = [m for m in index["models"] if m["signature"] not in skipped]
    progress(f"round {n}: tso optimize {time.monotonic() - t:.1f} s, predicted {predicted(out)}; "
             f"{len(todo)} signatures to measure")
    measured = 0
    for i, m in enumerate(todo, 1):
        try:
            median, least, kernel = time_model(os.path.join(missing_dir, m["file"]), a.threads,
                                               a.runs, a.warmup, a.seed, scratch)
        except Exception as e:  # ORT refuses the model or fails to run it
            reason = f"{type(e).__name__}: {' '.join(str(e).split())}"[:300]
            skipped[m["signature"]] = "onnxruntime failed: " + reason
            progress(f"round {n}: {i}/{len(todo)} skipped {m['signature']}: {reason}")
            continue
        table["entries"].append({"signature": m["signature"], "op": m["op"], "kernel": kernel,
                                 "median_ms": round(median, 6), "min_ms": round(least, 6),
                                 "samples": a.runs, "occurrences": 0})
        measured += 1
        progress(f"round {n}: {i}/{len(todo)} {median:8.3f} ms  {m['signature']}")
    if measured:
        write_table(table, a.output)
    shutil.rmtree(missing_dir)
    return measured, predicted(out)


# ------------------------------------------------- end-to-end check
def time_process(path, a):
    cmd = [sys.executable, ORT_TIME, path, "--threads", str(a.threads), "--runs", str(a.runs),
           "--warmup", str(a.warmup), "--seed", str(a.seed)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    m = ORT_LINE.search(r.stdout)
    if r.returncode != 0 or not m:
        raise Failure(f"ort_time.py {path}: " + (first_line(r.stderr) or "no timing line"))
    return float(m.group(1)), float(m.group(2))


def compare(original, optimized, a):
    """{name: (min over rounds of the minimums, median of the medians)}:
    each configuration in its own process, one untimed warm-up process each,
    then R rounds alternating the order."""
    paths = {"original": original, "optimized": optimized}
    for name, p in paths.items():
        progress(f"check: warm-up process, {name}")
        time_process(p, a)
    mins = {k: [] for k in paths}
    medians = {k: [] for k in paths}
    for r in range(a.check_rounds):
        order = list(paths) if r % 2 == 0 else list(reversed(paths))
        for name in order:
            lo, med = time_process(paths[name], a)
            mins[name].append(lo)
            medians[name].append(med)
        progress(f"check: round {r + 1}/{a.check_rounds}: original {mins['original'][-1]:.2f} ms, "
                 f"optimized {mins['optimized'][-1]:.2f} ms (min)")
    return {k: (min(mins[k]), statistics.median(medians[k])) for k in paths}


# ------------------------------------------------------------- input
def missing_external(path):
    """The first external data file `path` refers to that is not there, or None."""
    model = onnx.load(path, load_external_data=False)
    base = os.path.dirname(os.path.abspath(path))
    for t in model.graph.initializer:
        if uses_external_data(t):
            loc = {e.key: e.value for e in t.external_data}.get("location", "")
            if not os.path.isfile(os.path.join(base, loc)):
                return loc or "(no location)"
    return None


def input_model(a):
    """The complete ONNX file to optimize and time: MODEL, or its filled copy."""
    if not os.path.isfile(a.model):
        raise Failure(f"{a.model}: no such file", 2)
    missing = missing_external(a.model)
    if missing is None:
        return a.model
    if a.random_weights is None:
        raise Failure(f"{a.model}: graph-only (external data {missing} missing); give "
                      "--random-weights S to time it with seeded random weights", 2)
    name = os.path.basename(a.model)
    stem = re.sub(r"(\.graph)?\.onnx$", "", name)
    cache = types.SimpleNamespace(cache=os.path.join(ROOT, "build", "bench_models"),
                                  seed=a.random_weights)
    path, err = prepared(stem, a.model, True, cache)
    if err:
        raise Failure(f"{a.model}: {err}")
    progress(f"{name} is graph-only: using {os.path.relpath(path, ROOT)} (seed {a.random_weights})")
    return path


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.split("\n")[1:]))
    ap.add_argument("model")
    ap.add_argument("-o", "--output", required=True, metavar="TABLE.json",
                    help="the cost table: read when it exists, written after each round")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="default: all cores")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per model (default 20)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed runs first (default 5)")
    ap.add_argument("--seed", type=int, default=0, help="random inputs (default 0)")
    ap.add_argument("--random-weights", type=int, metavar="S",
                    help="fill a graph-only model with seeded weights")
    ap.add_argument("--tso", default=os.path.join(ROOT, "build", "tso"))
    ap.add_argument("--rounds", type=int, default=4, help="at most N searches (default 4)")
    ap.add_argument("--optimize", metavar="OUT.onnx",
                    help="write the faster of MODEL and its optimization to OUT, timed in ORT")
    ap.add_argument("--check-rounds", type=int, default=5,
                    help="alternating rounds of the end-to-end check (default 5)")
    a = ap.parse_args()
    if a.threads < 1 or a.runs < 1 or a.warmup < 0 or a.rounds < 1 or a.check_rounds < 1:
        ap.error("--threads, --runs, --rounds and --check-rounds >= 1, --warmup >= 0")
    if not os.path.isfile(a.tso):
        ap.error(f"no tso binary at {a.tso} (build the tso target or give --tso)")
    if a.optimize and os.path.abspath(a.optimize) == os.path.abspath(a.model):
        ap.error(f"--optimize {a.optimize} is the input model; choose another file")
    return a


def run(a):
    device = device_string(a.threads)
    table = load_table(a.output, device)
    model = input_model(a)
    load = loadavg()
    progress(f"device: {device}; table {a.output}: {len(table['entries'])} entries; "
             f"load {load[0] if load else '?'}")
    names = [n for n in table["model"].split(", ") if n]
    if os.path.basename(model) not in names:
        table["model"] = ", ".join(names + [os.path.basename(model)])
    if not os.path.exists(a.output):
        write_table(table, a.output)  # tso optimize --cost reads a file
    skipped = {}
    rounds, per_round, still_missing = 0, [], True
    scratch = tempfile.mkdtemp(prefix="ort_costs.")
    try:
        for n in range(1, a.rounds + 1):
            t = time.monotonic()
            measured, pred = measure_round(a, n, model, table, skipped, scratch)
            rounds = n
            per_round.append((measured, pred, time.monotonic() - t))
            if measured == 0:
                still_missing = False
                break
        print(f"table      {a.output}: {len(table['entries'])} entries ({device})")
        for n, (measured, pred, seconds) in enumerate(per_round, 1):
            print(f"round {n}    {measured} signatures measured in {seconds:.1f} s "
                  f"(the search's prediction on the table it started from: {pred})")
        print(f"rounds     {rounds}: " + (
            "the last search found nothing missing" if not still_missing else
            f"--rounds {a.rounds} reached; the last round measured signatures, so the search may "
            "ask for more (run again: the table is kept)"))
        for sig, why in skipped.items():
            print(f"skipped    {sig}: {why}")
        if a.optimize:
            check_and_write(a, model, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def check_and_write(a, model, scratch):
    optimized = os.path.join(scratch, "final.onnx")
    out = tso_optimize(a, model, optimized, a.output)
    progress(f"final tso optimize: predicted {predicted(out)}")
    res = compare(model, optimized, a)
    (o_min, o_med), (p_min, p_med) = res["original"], res["optimized"]
    # Written only when faster by both its minimum and its median.
    keep_optimized = p_min < o_min and p_med < o_med
    print(f"original   {model}: ORT min {o_min:.3f} ms, median {o_med:.3f} ms")
    print(f"optimized  tso optimize --cost {a.output} (predicted {predicted(out)}): "
          f"ORT min {p_min:.3f} ms, median {p_med:.3f} ms")
    why = (f"{a.check_rounds} alternating rounds of {a.runs} runs, {a.threads} threads: "
           f"optimized/original {p_min / o_min:.3f} by the minimum, {p_med / o_med:.3f} by the "
           f"median")
    chosen = optimized if keep_optimized else model
    tmp = f"{a.optimize}.tmp{os.getpid()}"
    shutil.copyfile(chosen, tmp)
    os.replace(tmp, a.optimize)
    print(f"wrote      {a.optimize}: the {'optimized' if keep_optimized else 'original'} model "
          f"({why}{'' if keep_optimized else '; the optimized one was not faster by both'})")


def main():
    a = parse_args()
    try:
        run(a)
    except Failure as e:
        print(f"ort_costs.py: {e}", file=sys.stderr)
        sys.exit(e.code)
    except OSError as e:  # a file that cannot be read or written: it names itself
        print(f"ort_costs.py: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
