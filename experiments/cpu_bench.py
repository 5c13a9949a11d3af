#!/usr/bin/env python3
"""ONNX Runtime and tso's CPU runtime on the same ONNX files, by the protocol
of ../shared/MEASURING.md. Called by experiments/cpu_bench.sh (which picks the
venv's Python); see `cpu_bench.sh --help` and experiments/README.md.

Per model: graph-only files are filled once with seeded random weights
(fill_weights.py, cached) and optimized once by `tso optimize --device cpu`
(cached, unless --no-optimize); then one untimed warm-up process per
configuration (ORT and tso on the input file, ORT and tso on the optimized
one), then R rounds alternating them, each a fresh process doing W warm-up and
K timed runs. Per configuration: the minimum of the rounds' minimums and the
median of the rounds' medians; ratio = tso / ORT, speedup = input / optimized
(the tables of the optimized files: cpu_bench_optimized.py).
"""
import argparse
import datetime
import filecmp
import glob
import importlib.metadata
import json
import math
import os
import platform
import re
import shlex
import signal
import statistics
import subprocess
import sys
import time

import cpu_bench_optimized

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "experiments")
FILL = os.path.join(HERE, "fill_weights.py")
ORT_TIME = os.path.join(HERE, "ort_time.py")
# Smallest first; models not named here follow alphabetically.
ORDER = ["squeezenet1_1", "resnet50", "resnext50_32x4d", "inception_v3", "bert_base_seq128",
         "nasnetalarge"]
HEAVY = {"nasnetalarge", "bert_base_seq128", "nasrnn"}  # fewer timed runs (--heavy-runs)
TSO_LATENCY = re.compile(r"^latency\s+median\s+([0-9.]+)\s*ms\s*\(min\s+([0-9.]+)", re.M)
ORT_LINE = re.compile(r"^ort min_ms=([0-9.]+) median_ms=([0-9.]+) runs=\d+\s*$", re.M)
TSO_PRODUCTS = re.compile(r"^products\s+([0-9.]+) ms per run \(([0-9.]+)%\), ([0-9.]+) GFLOP at "
                          r"([0-9.]+) GFLOP/s: (\d+) steps", re.M)
TSO_OTHER = re.compile(r"^other steps\s+([0-9.]+) ms per run \(([0-9.]+)%\): (\d+) steps", re.M)
ERR_WIDTH = 160
LOAD_WARNING = 0.5  # load average (1 min) above which timings are disturbed

T0 = time.monotonic()


def cost_cache_name(device):
    """The cache of measured costs in --cache for `tso optimize --device DEVICE`."""
    return f"{device}_costs.json"


COST_CACHE = cost_cache_name("cpu")  # in --cache: one cache of measured costs for every optimization


def keep_plan_choices_in(cache):
    """Every tso process this script starts keeps the CPU runtime's plan
    choices (which implementation each convolution and product runs) in
    CACHE/tso/plans-<device>.json rather than in ~/.cache/tso: timed once,
    they are shared by the optimizations, the speed checks and the timed
    processes of this run, and by no other run."""
    os.environ["XDG_CACHE_HOME"] = cache


def stale_plan_choices(cache, tso):
    """The plan choices under CACHE that are older than the tso binary: they
    chose between implementations of a runtime that is gone."""
    return [p for p in glob.glob(os.path.join(cache, "tso", "plans-*.json"))
            if os.path.isfile(tso) and os.path.getmtime(p) < os.path.getmtime(tso)]


def progress(msg):
    print(f"[{time.monotonic() - T0:7.1f}s] {msg}", file=sys.stderr, flush=True)


def shown_path(path):
    """Relative to the repository root when inside it."""
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path


def first_line(text):
    """The line that says what went wrong: the first that is not a warning, or a
    Python traceback's last."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    if not lines:
        return ""
    if lines[0].startswith("Traceback"):
        return lines[-1][:ERR_WIDTH]
    errors = [l for l in lines if not l.lower().startswith(("warning", "tso: warning"))]
    return (errors or lines)[0][:ERR_WIDTH]


# ---------------------------------------------------------------- the setting
def cpu_model():
    name, flags, logical, cores, sockets = "unknown", set(), 0, None, set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key == "model name":
                    name = value
                    logical += 1
                elif key == "flags":
                    flags = set(value.split())
                elif key == "cpu cores":
                    cores = int(value)
                elif key == "physical id":
                    sockets.add(value)
    except OSError:
        pass
    isa = [f for f in ("avx2", "fma", "avx512f") if f in flags]
    return name, logical, (cores * max(len(sockets), 1) if cores else None), isa


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except OSError:
        return None


def version(pkg):
    try:
        return importlib.metadata.version(pkg)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def git_head():
    try:
        r = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                           capture_output=True, text=True, timeout=10)
        return r.stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def setting_lines(a, models, n_cpus):
    name, logical, physical, isa = cpu_model()
    load = loadavg()
    tso_desc = a.tso
    if os.path.isfile(a.tso):
        built = datetime.datetime.fromtimestamp(os.path.getmtime(a.tso)).strftime("%Y-%m-%d %H:%M")
        tso_desc += f" (built {built}; source tree {git_head()})"
    else:
        tso_desc += " (missing: its rows will read failed)"
    heavy = ", ".join(sorted(HEAVY & set(m for m, _ in models)))
    runs = f"{a.warmup} warm-up + {a.runs} timed runs"
    if heavy:
        runs += f" ({heavy}: {a.heavy_runs})"
    env = " ".join(f"{k}={v}" for k, v in sorted(os.environ.items())
                   if k.startswith(("OMP_", "GOMP_", "KMP_", "DNNL_", "ONEDNN_", "ORT_", "MKL_")))
    configs = "ORT, tso" if a.no_optimize else "ORT input, tso input, ORT optimized, tso optimized"
    lines = [
        ("date", datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")),
        ("cpu", f"{name}; {logical} logical cores"
                + (f", {physical} physical" if physical else "")
                + f", {n_cpus} usable; {' '.join(isa) or 'no avx2'}"),
        ("threads", f"{a.threads} (ORT intra_op_num_threads, tso --threads)"),
        ("ort", f"onnxruntime {version('onnxruntime')}: CPUExecutionProvider, ORT_ENABLE_ALL, "
                "inter_op_num_threads 1, sequential"),
        ("tso", f"{tso_desc}: run FILE --device cpu --iters K --threads {a.threads}"
                + (f" {a.tso_flags}" if a.tso_flags else "")),
        ("python", f"{platform.python_version()}, numpy {version('numpy')}, onnx {version('onnx')}"),
        ("load", " ".join(f"{x:.2f}" for x in load) if load else "unknown"),
        ("protocol", f"per model 1 untimed warm-up process per configuration, then {a.rounds} "
                     f"rounds {configs}, ...; each process {runs}"),
        ("weights", f"graph-only models filled by fill_weights.py --seed {a.seed} "
                    f"(cache {shown_path(a.cache)})"),
    ]
    if not a.no_optimize:
        cmd = optimize_command("FILE", os.path.join(a.cache, "<model>.opt.onnx"),
                               os.path.join(a.cache, "<model>.opt.json"), a)
        lines.append(("optimize", " ".join(shlex.quote(shown_path(x)) for x in cmd)
                      + "; reused while newer than FILE and the tso binary, with the same command"
                      + ("; --reoptimize: the cost cache deleted, every model optimized again"
                         if a.reoptimize else "")))
        if a.threads != n_cpus:
            lines.append(("note", f"tso optimize measures costs and checks speed on all {n_cpus} "
                                  f"cores, the timings here use {a.threads} threads"))
    lines += [
        ("command", " ".join(shlex.quote(x) for x in ["experiments/cpu_bench.sh"] + sys.argv[1:])),
    ]
    if env:
        lines.append(("env", env))
    if load and load[0] > LOAD_WARNING:
        lines.append(("warning", f"load average {load[0]:.2f} at start: something else is running; "
                                 "MEASURING.md asks for an idle machine"))
    return lines


# ------------------------------------------------------------------- models
def find_models(models_dir):
    """{stem: path}: a full model wins over the graph-only file of the same stem."""
    found = {}
    for f in sorted(os.listdir(models_dir)):
        if not f.endswith(".onnx"):
            continue
        graph_only = f.endswith(".graph.onnx")
        stem = f[: -len(".graph.onnx")] if graph_only else f[: -len(".onnx")]
        if stem in found and graph_only:
            continue  # the full file of this stem is already chosen
        found[stem] = (os.path.join(models_dir, f), graph_only)
    order = {s: k for k, s in enumerate(ORDER)}
    return sorted(found.items(), key=lambda kv: (order.get(kv[0], len(ORDER)), kv[0]))


def prepared(stem, src, graph_only, a):
    """The file both runtimes run: src itself, or its filled copy in the cache."""
    if not graph_only:
        return src, None
    os.makedirs(a.cache, exist_ok=True)
    out = os.path.join(a.cache, f"{stem}.seed{a.seed}.onnx")
    newest_input = max(os.path.getmtime(src), os.path.getmtime(FILL))
    if os.path.isfile(out) and os.path.getmtime(out) > newest_input:
        return out, None
    progress(f"{stem}: filling {os.path.basename(src)} with seeded weights -> {shown_path(out)}")
    # Written under its final name in a scratch folder, then moved: an
    # interrupted fill never leaves a file that looks newer than its source.
    scratch = os.path.join(a.cache, ".filling")
    os.makedirs(scratch, exist_ok=True)
    tmp = os.path.join(scratch, os.path.basename(out))
    r = subprocess.run([sys.executable, FILL, src, tmp, "--seed", str(a.seed)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        for p in (tmp, tmp + ".data"):
            if os.path.exists(p):
                os.remove(p)
        return None, "fill_weights.py failed: " + first_line(r.stderr or r.stdout)
    if os.path.exists(tmp + ".data"):  # over 2 GB: the weights lie beside it under this name
        os.replace(tmp + ".data", out + ".data")
    os.replace(tmp, out)
    try:
        os.rmdir(scratch)
    except OSError:
        pass
    return out, None


def optimize_command(path, out, report, a, device="cpu"):
    return ([a.tso, "optimize", path, "-o", out, "--device", device, "--report", report,
             "--cost-cache", os.path.join(a.cache, cost_cache_name(device)), "-q"]
            + shlex.split(a.optimize_flags))


def optimized(stem, path, a, device="cpu"):
    """{"path", "report", "seconds", "reused", "same_bytes"} or {"error"}: `tso optimize
    --device DEVICE` of path into the cache, reused while newer than path and
    the tso binary and made by the same command (its record,
    <model>[.<device>].opt.run.json, is written last, so an interrupted
    optimization is never reused). Each device has its own cost cache,
    cost_cache_name(device). same_bytes: the file written is the input's,
    byte for byte (tso keeps the user's file when its graph is not faster)."""
    if not os.path.isfile(a.tso):
        return {"error": f"tso optimize: no tso binary at {a.tso} (build the tso target)"}
    base = os.path.join(a.cache, os.path.basename(path)[: -len(".onnx")])
    if device != "cpu":
        base += "." + device
    out, report, record = base + ".opt.onnx", base + ".opt.json", base + ".opt.run.json"
    cmd = optimize_command(path, out, report, a, device)
    newest_input = max(os.path.getmtime(path), os.path.getmtime(a.tso))
    try:
        with open(record) as f:
            rec = json.load(f)
        fresh = all(os.path.getmtime(p) > newest_input for p in (out, report))
        if not a.reoptimize and rec.get("command") == cmd and fresh:
            with open(report) as f:
                res = {"path": out, "report": checked_report(json.load(f)), "seconds": rec["seconds"],
                       "reused": True, "same_bytes": filecmp.cmp(path, out, shallow=False)}
            say_optimized(stem, res)
            return res
    except (OSError, ValueError, KeyError, TypeError):
        pass  # no usable earlier optimization: run it
    if os.path.exists(record):
        os.remove(record)
    os.makedirs(a.cache, exist_ok=True)
    progress(f"{stem}: tso optimize {os.path.basename(path)} -> {shown_path(out)}")
    t = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"tso optimize timed out after {a.timeout} s"}
    except OSError as e:
        return {"error": f"tso optimize: cannot start {a.tso}: {e.strerror}"}
    seconds = time.monotonic() - t
    if r.returncode != 0:
        return {"error": f"tso optimize exit {r.returncode}: "
                         + (first_line(r.stderr) or first_line(r.stdout) or "(no output)")}
    try:
        with open(report) as f:
            res = {"path": out, "report": checked_report(json.load(f)), "seconds": seconds,
                   "reused": False, "same_bytes": filecmp.cmp(path, out, shallow=False)}
    except (OSError, ValueError, KeyError, TypeError) as e:
        return {"error": f"tso optimize wrote no readable report {report}: {e!r}"}
    with open(record, "w") as f:
        json.dump({"command": cmd, "seconds": seconds}, f)
    for line in r.stderr.splitlines():  # what the cost cache measured
        if line.startswith("cost cache"):
            progress(f"{stem}: {' '.join(line.split())}")
    say_optimized(stem, res)
    return res


def checked_report(rep):
    """The report, if it has the keys the tables read (KeyError otherwise)."""
    for k in ("before", "after"):
        float(rep["predicted_cost_us"][k])
    for k in ("ran", "note", "input_ms", "optimized_ms", "written"):
        rep["speed_check"][k]
    rep["cost_model"]
    return rep


def say_optimized(stem, res):
    rep = res["report"]
    pc, sc = rep["predicted_cost_us"], rep["speed_check"]
    how = "reused (optimized earlier in" if res["reused"] else "optimized in"
    check = (f"speed check {sc['input_ms']:.2f} -> {sc['optimized_ms']:.2f} ms" if sc["ran"]
             else f"no speed check ({sc['note']})")
    progress(f"{stem}: {how} {res['seconds']:.1f} s{')' if res['reused'] else ''}: predicted "
             f"{pc['before'] / 1000:.2f} -> {pc['after'] / 1000:.2f} ms, {check}, "
             f"wrote the {sc['written']} graph")


# ------------------------------------------------------------------ timing
def run_process(cmd, timeout):
    """(stdout, error or None)."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "", f"timed out after {timeout} s"
    except OSError as e:
        return "", f"cannot start {cmd[0]}: {e.strerror}"
    if r.returncode != 0:
        err = first_line(r.stderr) or first_line(r.stdout) or "(no output)"
        if r.returncode < 0:
            try:
                how = "killed by " + signal.Signals(-r.returncode).name
            except ValueError:
                how = f"killed by signal {-r.returncode}"
        else:
            how = f"exit {r.returncode}"
        return r.stdout, f"{how}: {err}"
    return r.stdout, None


def process_times(cmd, pattern, what, timeout, median_first=False):
    """((min, median), None) or (None, error): runs cmd and reads its minimum
    and median (in that order of `pattern`'s groups, or the other way round)
    from the line `what` names."""
    out, err = run_process(cmd, timeout)
    if err:
        return None, err
    m = pattern.search(out)
    if not m:
        return None, f"no '{what}' line: " + (first_line(out) or "(no output)")
    a, b = float(m.group(1)), float(m.group(2))
    return ((b, a) if median_first else (a, b)), None


def time_ort(path, runs, warmup, a):
    cmd = [sys.executable, ORT_TIME, path, "--threads", str(a.threads), "--runs", str(runs),
           "--warmup", str(warmup), "--seed", str(a.seed)]
    return process_times(cmd, ORT_LINE, "ort min_ms=", a.timeout)


def time_tso(path, runs, warmup, a):
    # The agreed contract has no warm-up flag: tso run warms up on its own.
    if not os.path.isfile(a.tso):
        return None, f"no tso binary at {a.tso} (build the tso target)"
    cmd = [a.tso, "run", path, "--device", "cpu", "--iters", str(runs), "--threads", str(a.threads)]
    cmd += shlex.split(a.tso_flags)
    return process_times(cmd, TSO_LATENCY, "latency median", a.timeout, median_first=True)


def profile_once(path, a):
    """One `tso run --profile` process of the file: {product_ms,
    product_share, gflop, gflops, products, other_ms, other_share, others},
    or an error string."""
    cmd = [a.tso, "run", path, "--device", "cpu", "--iters", "5", "--threads", str(a.threads),
           "--profile", str(cpu_bench_optimized.PROFILE_RUNS)] + shlex.split(a.tso_flags)
    out, err = run_process(cmd, a.timeout)
    if err:
        return err
    p, o = TSO_PRODUCTS.search(out), TSO_OTHER.search(out)
    if not p or not o:
        return "no 'products' and 'other steps' lines: " + (first_line(out) or "(no output)")
    return {"product_ms": float(p.group(1)), "product_share": float(p.group(2)) / 100,
            "gflop": float(p.group(3)), "gflops": float(p.group(4)), "products": int(p.group(5)),
            "other_ms": float(o.group(1)), "other_share": float(o.group(2)) / 100,
            "others": int(o.group(3))}


def profile_tso(path, a):
    """Where tso's CPU runtime spends a run of the file: of PROFILE_PROCESSES
    profiles (profile_once), the one whose steps add up to the least, as the
    timings take each configuration's minimum; or the first error."""
    if not os.path.isfile(a.tso):
        return f"no tso binary at {a.tso} (build the tso target)"
    profiles = []
    for _ in range(cpu_bench_optimized.PROFILE_PROCESSES):
        prof = profile_once(path, a)
        if isinstance(prof, str):
            return prof
        profiles.append(prof)
    return min(profiles, key=lambda p: p["product_ms"] + p["other_ms"])


def configs(path, opt):
    """[(name, timer, file)]: ORT and tso on the input file, then on the
    optimized one when there is one; alternated in this order."""
    out = [("ort", time_ort, path), ("tso", time_tso, path)]
    if opt and "path" in opt:
        out += [("ort_opt", time_ort, opt["path"]), ("tso_opt", time_tso, opt["path"])]
    return out


def alternate(label, timers, rounds, warm_runs, runs):
    """{name: (min, median) or error} of timers [(name, time)], where time(n)
    runs one process of n timed runs and returns ((min, median), None) or
    (None, error): one untimed warm-up process of `warm_runs` each, then
    `rounds` rounds alternating them; the minimum of the rounds' minimums and
    the median of their medians. A configuration that fails once is not
    timed again."""
    mins = {c: [] for c, _ in timers}
    medians = {c: [] for c, _ in timers}
    error = {}
    for c, time in timers:
        _, err = time(warm_runs)
        if err:
            error[c] = err
        progress(f"{label}: warm-up {c}: {'failed: ' + err if err else 'ok'}")
    for r in range(1, rounds + 1):
        if len(error) == len(timers):
            progress(f"{label}: no rounds: every configuration failed")
            break
        said = []
        for c, time in timers:
            if c in error:
                continue
            res, err = time(runs)
            if err:
                error[c] = f"(round {r}) {err}"
                said.append(f"{c} failed: {err}")
                continue
            mins[c].append(res[0])
            medians[c].append(res[1])
            said.append(f"{c} min {res[0]:.2f} median {res[1]:.2f} ms")
        progress(f"{label}: round {r}/{rounds}: " + ", ".join(said))
    return {c: error[c] if c in error else (min(mins[c]), statistics.median(medians[c]))
            for c, _ in timers}


def bench_model(stem, path, opt, a):
    """{config: (min, median)} or {config: 'error'}; configs "ort", "tso" and,
    with an optimized file, "ort_opt", "tso_opt"; when optimized, "profile":
    where tso's runtime spends a run of the input file (profile_tso)."""
    runs = a.heavy_runs if stem in HEAVY else a.runs
    timers = [(c, lambda n, fn=fn, f=f: fn(f, n, a.warmup, a)) for c, fn, f in configs(path, opt)]
    res = alternate(stem, timers, a.rounds, min(runs, 3), runs)
    if opt is not None:
        res["profile"] = profile_tso(path, a)
        progress(f"{stem}: profile: " + (res["profile"] if isinstance(res["profile"], str) else
                                          f"products {res['profile']['product_share']:.1%} of the run"))
    return res


# ------------------------------------------------------------------- table
COLS = ["ORT min", "ORT median", "tso min", "tso median", "ratio min", "ratio median"]


def row_cells(res):
    """(cells, error): six cells (ms, ms, ms, ms, ratio, ratio) with blanks where failed."""
    o, t = res["ort"], res["tso"]
    cells = [""] * 6
    errs = []
    if isinstance(o, tuple):
        cells[0], cells[1] = f"{o[0]:.2f}", f"{o[1]:.2f}"
    else:
        errs.append("ORT failed: " + o)
    if isinstance(t, tuple):
        cells[2], cells[3] = f"{t[0]:.2f}", f"{t[1]:.2f}"
    else:
        errs.append(("tso " if errs else "") + "failed: " + t)
    if isinstance(o, tuple) and isinstance(t, tuple):
        cells[4], cells[5] = f"{t[0] / o[0]:.2f}", f"{t[1] / o[1]:.2f}"
    return cells, "; ".join(errs)


def text_row(stem, cells, err, w):
    if err and not any(cells[2:]):  # tso's side failed: the message takes its columns
        return f"{stem:<{w}}  " + "  ".join(f"{c:>10}" for c in cells[:2]) + f"  {err}"
    line = f"{stem:<{w}}  " + "  ".join(f"{c:>10}" for c in cells[:4]) + "  " + \
           "  ".join(f"{c:>12}" for c in cells[4:])
    return line + (f"  {err}" if err else "")


def text_header(w):
    return (f"{'model':<{w}}  " + "  ".join(f"{c:>10}" for c in COLS[:4]) + "  "
            + "  ".join(f"{c:>12}" for c in COLS[4:]) + "\n"
            + f"{'':<{w}}  " + "  ".join(f"{'(ms)':>10}" for _ in range(4)) + "  "
            + "  ".join(f"{'(tso/ORT)':>12}" for _ in range(2)))


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summary_lines(results):
    both = [(s, r["ort"], r["tso"]) for s, r in results
            if isinstance(r["ort"], tuple) and isinstance(r["tso"], tuple)]
    lines = []
    if both:
        gmin = geomean([t[0] / o[0] for _, o, t in both])
        gmed = geomean([t[1] / o[1] for _, o, t in both])
        lines.append(f"geomean ratio (min) {gmin:.2f}, (median) {gmed:.2f}; "
                     "target: every model <= 1.00, geomean <= 0.90")
        over = [s for s, o, t in both if t[0] / o[0] > 1.0]
        lines.append(f"{len(both)} of {len(results)} models timed on both; ratio (min) over 1.00: "
                     + (", ".join(over) if over else "none"))
    else:
        lines.append("geomean ratio: no model timed on both runtimes; "
                     "target: every model <= 1.00, geomean <= 0.90")
    failed = [s for s, r in results if not (isinstance(r["ort"], tuple) and isinstance(r["tso"], tuple))]
    if failed:
        lines.append("failed: " + ", ".join(failed))
    return lines


def write_markdown(path, setting, results, summary, optimized_lines, last):
    md = ["# tso CPU runtime vs ONNX Runtime", "", "```"]
    md += [f"{k:<9} {v}" for k, v in setting]
    md += ["```", "",
           "| model | ORT min (ms) | ORT median (ms) | tso min (ms) | tso median (ms) "
           "| ratio min (tso/ORT) | ratio median (tso/ORT) |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for stem, res in results:
        cells, err = row_cells(res)
        if err and not any(cells[2:]):
            cells[2] = err.replace("|", "\\|")
        elif err:
            cells[5] += " " + err.replace("|", "\\|")
        md.append(f"| {stem} | " + " | ".join(cells) + " |")
    md += [""] + [l + "  " for l in summary] + optimized_lines + ["", last]
    with open(path, "w") as f:
        f.write("\n".join(md) + "\n")


# -------------------------------------------------------------------- main
def usable_cpus():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def parser():
    n_cpus = usable_cpus()
    ap = argparse.ArgumentParser(prog="cpu_bench.sh",
                                 description="ONNX Runtime vs tso's CPU runtime on the same ONNX "
                                             "files, alternating rounds (../shared/MEASURING.md).")
    ap.add_argument("--threads", type=int, default=n_cpus, help=f"threads for both (default {n_cpus})")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per process (default 20)")
    ap.add_argument("--heavy-runs", type=int, default=10,
                    help=f"timed runs per process for {', '.join(sorted(HEAVY))} (default 10)")
    ap.add_argument("--warmup", type=int, default=5, help="ORT's untimed runs per process (default 5)")
    ap.add_argument("--models", default="", help="comma-separated stems, e.g. resnet50,squeezenet1_1")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "..", "shared", "models"),
                    help="default ../shared/models (from the repository root)")
    ap.add_argument("--tso", default=os.path.join(ROOT, "build", "tso"), help="default build/tso")
    ap.add_argument("--tso-flags", default="", help="extra flags for tso run, one string")
    ap.add_argument("--out", help="also write the setting and tables as markdown")
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "bench_models"),
                    help="filled graph-only models, optimized files, their reports and the cost cache "
                         "(default build/bench_models)")
    ap.add_argument("--seed", type=int, default=0, help="weights and inputs (default 0)")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per process (default 1200)")
    ap.add_argument("--no-optimize", action="store_true",
                    help="time only the input files (no tso optimize, no optimization tables)")
    ap.add_argument("--optimize-flags", default="", help="extra flags for tso optimize, one string")
    ap.add_argument("--reoptimize", action="store_true",
                    help=f"delete the cost cache ({COST_CACHE} in --cache; also deleted when older "
                         "than the tso binary) and optimize every model again: costs measured on "
                         "a busy machine stay in the cache otherwise")
    return ap


def options(argv):
    """The settings of cpu_bench.sh ARGV..., checked, paths absolute (also
    for experiments/reproduce.py, which times its models with them)."""
    ap = parser()
    a = ap.parse_args(argv)
    if a.threads < 1 or a.rounds < 1 or a.runs < 1 or a.heavy_runs < 1 or a.warmup < 0:
        ap.error("--threads, --rounds, --runs, --heavy-runs >= 1; --warmup >= 0")
    a.tso = os.path.abspath(a.tso)
    a.cache = os.path.abspath(a.cache)
    a.models_dir = os.path.abspath(a.models_dir)
    if not os.path.isdir(a.models_dir):
        ap.error(f"no models directory {a.models_dir}")
    keep_plan_choices_in(a.cache)
    return a, ap


def fresh_cost_cache(a):
    """Deletes the cost cache of --cache when --reoptimize asks or when it is
    older than the tso binary: costs measured by an older runtime would
    predict for a runtime that is gone. Stale plan choices go too."""
    for path in stale_plan_choices(a.cache, a.tso):
        progress(f"removing {shown_path(path)}: older than the tso binary")
        os.remove(path)
    costs = os.path.join(a.cache, COST_CACHE)
    if a.no_optimize or not os.path.exists(costs):
        return
    stale = os.path.isfile(a.tso) and os.path.getmtime(costs) < os.path.getmtime(a.tso)
    if a.reoptimize or stale:
        progress(f"removing {shown_path(costs)}: "
                 + ("--reoptimize" if a.reoptimize else "older than the tso binary"))
        os.remove(costs)


def main():
    n_cpus = usable_cpus()
    a, ap = options(sys.argv[1:])
    models = find_models(a.models_dir)
    if a.models:
        want = [m.strip() for m in a.models.split(",") if m.strip()]
        known = dict(models)
        unknown = [m for m in want if m not in known]
        if unknown:
            ap.error(f"unknown model(s) {', '.join(unknown)}; {a.models_dir} has "
                     + ", ".join(s for s, _ in models))
        models = [(m, known[m]) for m in want]
    if not models:
        ap.error(f"no .onnx models in {a.models_dir}")

    setting = setting_lines(a, models, n_cpus)
    for k, v in setting:
        print(f"{k:<9} {v}", flush=True)
    print(flush=True)

    # Fill every graph-only model first, so no filling runs between timings.
    files = []
    for stem, (src, graph_only) in models:
        path, err = prepared(stem, src, graph_only, a)
        files.append((stem, path, err))
    # Then optimize them all, so no optimization runs between timings either.
    opts = {}
    fresh_cost_cache(a)
    for stem, path, err in files:
        if not a.no_optimize:
            opts[stem] = {"error": "not optimized: " + err} if err else optimized(stem, path, a)

    w = max(len("model"), max(len(s) for s, _, _ in files))
    print(text_header(w), flush=True)
    results = []
    for stem, path, err in files:
        if err:
            res = {"ort": err, "tso": err}
        else:
            progress(f"{stem}: {shown_path(path)}")
            res = bench_model(stem, path, opts.get(stem), a)
        results.append((stem, res))
        cells, rerr = row_cells(res)
        print(text_row(stem, cells, rerr, w), flush=True)

    end = loadavg()
    summary = summary_lines(results)
    last = ("load average at the end: " + (" ".join(f"{x:.2f}" for x in end) if end else "unknown")
            + f"; {time.monotonic() - T0:.0f} s in all")
    with_opt = [(s, r, opts[s]) for s, r in results if s in opts]
    print()
    for l in summary + (cpu_bench_optimized.text_lines(with_opt) if with_opt else []) + ["", last]:
        print(l)
    if a.out:
        md_opt = cpu_bench_optimized.markdown_lines(with_opt) if with_opt else []
        write_markdown(a.out, setting, results, summary, md_opt, last)
        print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
