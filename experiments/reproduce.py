#!/usr/bin/env python3
"""The project's results in one command: experiments/reproduce.sh (which
picks the venv's Python); see `reproduce.sh --help` and experiments/README.md.

A run is a list of rows (a model of a table, a generator run, ...), each
measured by the scripts beside this one (cpu_bench, pet_bench,
pipeline_bench, gpu_bench) and kept as OUT/rows/<row>.json as soon as it
is finished. A second run with the same --out skips the rows kept there
(those measured with other settings or another tso binary are measured
again), so an interrupted run resumes. Then OUT/results.md and the plots
(repro_report.py, repro_plots.py) are written from every row kept, also
after an interrupt. Working files (filled models, optimized files, cost
caches, generated rules) go to OUT/work: a new --out measures everything
afresh.
"""
import argparse
import datetime
import filecmp
import fnmatch
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable

import cpu_bench
import gpu_bench
import pet_bench
import pipeline_bench
import repro_plots
import repro_report
from cpu_bench import ROOT, shown_path

TASO_MODELS = ["squeezenet1_1", "resnet50", "resnext50_32x4d", "inception_v3", "nasrnn",
               "bert_base_seq128", "nasnetalarge"]
PET_MODELS = ["resnet18", "csrnet", "inception_v3", "bert_base_seq128"]
PROFILES = {
    # rounds, timed runs per process (heavy models: fewer), PET's, batches, generator sizes,
    # timed runs per process on the GPU (replays for tso)
    "full": {"models": TASO_MODELS, "rounds": 5, "runs": 20, "heavy_runs": 10,
             "pet_models": PET_MODELS, "pet_runs": 10, "pet_heavy_runs": 3, "batches": [1, 16],
             "max_ops": [3, 4], "gpu_runs": 200},
    "quick": {"models": ["squeezenet1_1", "resnet50", "nasrnn"], "rounds": 3, "runs": 10,
              "heavy_runs": 5, "pet_models": ["resnet18", "csrnet"], "pet_runs": 5,
              "pet_heavy_runs": 3, "batches": [1], "max_ops": [3], "gpu_runs": 50},
}
MIN_ROUNDS = 5  # ../shared/MEASURING.md

# Prior estimates (seconds) of each row on an idle machine, for the time left
# before any row has finished; then they are scaled by the finished rows'
# actual / estimated. TASO's table: (optimize, one round of the 4
# configurations at the full profile's runs).
TASO_ESTIMATE = {"squeezenet1_1": (8, 1), "resnet50": (35, 5), "resnext50_32x4d": (20, 5),
                 "inception_v3": (45, 6), "nasrnn": (3, 1.5), "bert_base_seq128": (10, 9),
                 "nasnetalarge": (150, 16)}
# PET's: (both optimizations, one round of the 3 configurations) per batch.
PET_ESTIMATE = {("resnet18", 1): (15, 2), ("csrnet", 1): (105, 8), ("inception_v3", 1): (48, 4),
                ("bert_base_seq128", 1): (20, 7), ("resnet18", 16): (125, 11),
                ("csrnet", 16): (900, 76), ("inception_v3", 16): (413, 28),
                ("bert_base_seq128", 16): (158, 40)}
PIPELINE_ESTIMATE = {("generate", 3): 8, ("verify", 3): 35, ("generate", 4): 278,
                     ("verify", 4): 1411}
# The GPU's: optimizing (costs measured on the GPU) and the rounds of 5
# configurations, mostly PyTorch's start and compile (a guess: never run yet).
GPU_ESTIMATE = {"nasnetalarge": 900, "bert_base_seq128": 400}
GPU_DEFAULT_ESTIMATE = 300


@dataclass
class Row:
    id: str
    estimate_s: float
    run: Callable[[], dict]
    settings: dict
    outputs: list = field(default_factory=list)  # files a kept row still needs

    def path(self, out):
        return os.path.join(out, "rows", self.id.replace("/", "__") + ".json")


def progress(msg):
    cpu_bench.progress(msg)


def loadavg():
    return cpu_bench.loadavg() or [0.0, 0.0, 0.0]


def cpu_busy(seconds=1.0):
    """The share of the machine's CPU time spent outside idle over `seconds`
    (/proc/stat), or None where it cannot be read. Taken between rows, when no
    process of this run is running, it is other processes' load, which the
    load average mixes with this run's row before."""
    def sample():
        with open("/proc/stat") as f:
            ticks = [int(x) for x in f.readline().split()[1:]]
        return sum(ticks), ticks[3] + ticks[4]  # all, idle + iowait
    try:
        all0, idle0 = sample()
        time.sleep(seconds)
        all1, idle1 = sample()
    except (OSError, ValueError, IndexError):
        return None
    return 1 - (idle1 - idle0) / (all1 - all0) if all1 > all0 else None


def duration(s):
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


# -------------------------------------------------------------------- build
def build():
    """Builds the tso target when it is out of date (a dry run says what it
    would do); configures build/ first when there is none."""
    build_dir = os.path.join(ROOT, "build")
    if not os.path.isfile(os.path.join(build_dir, "CMakeCache.txt")):
        progress("configuring build/ (Release)")
        subprocess.run(["cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja",
                        "-DCMAKE_BUILD_TYPE=Release"], check=True, stdout=sys.stderr)
    dry = subprocess.run(["cmake", "--build", build_dir, "--target", "tso", "--", "-n"],
                         capture_output=True, text=True)
    if dry.returncode == 0 and "no work to do" in dry.stdout:
        progress("build/tso is up to date")
        return
    progress("building the tso target (out of date)")
    subprocess.run(["cmake", "--build", build_dir, "--target", "tso", "-j", str(os.cpu_count())],
                   check=True, stdout=sys.stderr)


def gpu_status():
    """(True, what) when nvidia-smi lists a GPU, else (False, why not)."""
    try:
        r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        return False, "nvidia-smi not found: no NVIDIA driver on this machine"
    except (OSError, subprocess.SubprocessError) as e:
        return False, f"nvidia-smi failed: {e}"
    if r.returncode != 0 or "GPU" not in r.stdout:
        return False, "nvidia-smi lists no GPU: " + (r.stderr or r.stdout).strip()[:120]
    return True, r.stdout.strip().splitlines()[0]


# --------------------------------------------------------------------- rows
def taso_row(stem, ctx):
    """TASO's table, one model at batch 1: ORT and tso's CPU runtime on the
    input file and on tso optimize's output (cpu_bench)."""
    a = ctx["cpu"]
    if stem == "nasrnn":
        path, err = pet_bench.zoo_model(stem, 1, a)
    elif stem in ctx["shared"]:
        src, graph_only = ctx["shared"][stem]
        path, err = cpu_bench.prepared(stem, src, graph_only, a)
    else:
        path, err = None, f"no {stem} model in {shown_path(a.models_dir)}"
    if err:
        return {"error": err}
    opt = cpu_bench.optimized(stem, path, a)
    times = cpu_bench.bench_model(stem, path, opt, a)
    same = "path" in opt and filecmp.cmp(path, opt["path"], shallow=False)
    return {"file": shown_path(path), "times": times, "optimize": opt, "same_file": same}


def pet_row(stem, batch, ctx):
    return pet_bench.bench_row(stem, batch, ctx["pet"])


def generate_row(n, ctx):
    ops = os.path.join(ROOT, "generator", "taso.ops")
    return pipeline_bench.generate_row(ctx["tso"], n, ops, gen_rules(n, ctx), ctx["timeout"])


def verify_row(n, ctx):
    rules = gen_rules(n, ctx)
    if not os.path.isfile(rules):
        return {"error": f"no {shown_path(rules)}: the generate row did not run"}
    return pipeline_bench.verify_row(ctx["tso"], rules, rules[:-len(".rules")] + ".verified.rules",
                                     ctx["timeout"])


def gen_rules(n, ctx):
    return os.path.join(ctx["work"], f"taso_n{n}.rules")


def gpu_row(stem, ctx):
    """TASO's table on the GPU, one model (gpu_bench): tso's CUDA runtime on the
    input file and on `tso optimize --device cuda`'s output, beside PyTorch."""
    return gpu_bench.bench_row(stem, ctx["gpu"])


def plan(a, p, ctx, gpu):
    tso_id = tso_identity(ctx["tso"])
    timing = {"tso": tso_id, "threads": a.threads, "seed": a.seed, "rounds": a.rounds,
              "runs": p["runs"], "heavy_runs": p["heavy_runs"]}
    pet_timing = {"tso": tso_id, "threads": a.threads, "seed": a.seed, "rounds": a.rounds,
                  "runs": p["pet_runs"], "heavy_runs": p["pet_heavy_runs"]}
    rows = []
    for stem in p["models"]:
        opt_s, round_s = TASO_ESTIMATE.get(stem, (60, 15))
        scale = p["runs"] / PROFILES["full"]["runs"]
        rows.append(Row(f"taso/{stem}", opt_s + round_s * scale * (a.rounds + 1),
                        lambda stem=stem: taso_row(stem, ctx), timing))
    for batch in p["batches"]:
        for stem in p["pet_models"]:
            opt_s, round_s = PET_ESTIMATE.get((stem, batch), (300, 10))
            rows.append(Row(f"pet/{stem}.b{batch}", opt_s + round_s * (a.rounds + 1),
                            lambda stem=stem, batch=batch: pet_row(stem, batch, ctx), pet_timing))
    for n in p["max_ops"]:
        rows.append(Row(f"pipeline/generate.n{n}", PIPELINE_ESTIMATE.get(("generate", n), 600),
                        lambda n=n: generate_row(n, ctx), {"tso": tso_id},
                        outputs=[gen_rules(n, ctx)]))
        rows.append(Row(f"pipeline/verify.n{n}", PIPELINE_ESTIMATE.get(("verify", n), 600),
                        lambda n=n: verify_row(n, ctx), {"tso": tso_id}))
    if gpu:
        gpu_timing = {"tso": tso_id, "seed": a.seed, "rounds": a.rounds, "runs": p["gpu_runs"]}
        for stem in p["models"]:
            rows.append(Row(f"gpu/{stem}", GPU_ESTIMATE.get(stem, GPU_DEFAULT_ESTIMATE),
                            lambda stem=stem: gpu_row(stem, ctx), gpu_timing))
    return rows


def tso_identity(tso):
    """The binary's modification time: rows measured with another build are
    measured again."""
    t = os.path.getmtime(tso)
    return datetime.datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S")


def select(rows, only, skip):
    def hit(row, patterns):
        return any(fnmatch.fnmatch(row.id, p) for p in patterns)
    return [r for r in rows if (not only or hit(r, only)) and not hit(r, skip)]


# ------------------------------------------------------------------- runner
def kept(row, out):
    """The kept record of `row`, or None (absent, failed, measured with other
    settings, or an output it needs is gone): a failed row is tried again."""
    try:
        with open(row.path(out)) as f:
            rec = json.load(f)
    except (OSError, ValueError):
        return None
    if (rec.get("settings") != row.settings or "error" in rec.get("result", {"error": 1})
            or not all(os.path.exists(p) for p in row.outputs)):
        return None
    return rec


def write_atomically(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def run_rows(rows, out):
    """Runs the rows not kept in `out`, printing the time left; returns
    (records by id, interrupted)."""
    records, todo = {}, []
    for r in rows:
        rec = kept(r, out)
        if rec:
            records[r.id] = rec
        else:
            todo.append(r)
    if records:
        progress(f"resuming: {len(records)} of {len(rows)} rows kept in {shown_path(out)}, "
                 f"{len(todo)} to run")
    actual = prior = 0.0
    start = time.monotonic()
    for k, r in enumerate(todo, 1):
        left_prior = sum(x.estimate_s for x in todo[k - 1:])
        factor = actual / prior if prior else 1.0
        basis = "from the rows finished so far" if prior else "before any row finished"
        load, busy = loadavg(), cpu_busy()
        busy_note = (f"; WARNING {busy:.0%} of the CPUs busy in the second before it: something "
                     "else is running" if busy is not None and busy > repro_report.BUSY_WARNING
                     else "")
        progress(f"[{k}/{len(todo)}] {r.id}: {duration(time.monotonic() - start)} elapsed, "
                 f"about {duration(left_prior * factor)} left (estimate {basis}){busy_note}")
        t = time.monotonic()
        try:
            result = r.run()
        except KeyboardInterrupt:
            progress(f"interrupted in {r.id}: {len(records)} rows kept in {shown_path(out)}; "
                     "the same command resumes")
            return records, True
        except Exception:  # a bug in a script: say it, keep nothing, go on
            progress(f"{r.id} failed (not kept; a rerun tries again):\n{traceback.format_exc()}")
            continue
        seconds = time.monotonic() - t
        actual += seconds
        prior += r.estimate_s
        rec = {"id": r.id, "settings": r.settings, "seconds": seconds, "load_at_start": load,
               "busy_at_start": busy,
               "finished": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
               "result": result}
        write_atomically(r.path(out), json.dumps(rec, indent=1) + "\n")
        records[r.id] = rec
        progress(f"{r.id}: done in {duration(seconds)}"
                 + (f" (failed: {result['error']})" if "error" in result else ""))
    return records, False


def remove_stale_costs(work, tso):
    """Cost caches and plan choices older than the tso binary hold a
    runtime's costs and choices that are gone (cpu_bench's rule, for every
    cache of the work folder)."""
    caches = [os.path.join(work, name)
              for name in (cpu_bench.COST_CACHE, pet_bench.COST_CACHE, gpu_bench.COST_CACHE)]
    stale = [p for p in caches if os.path.exists(p) and os.path.getmtime(p) < os.path.getmtime(tso)]
    for path in stale + cpu_bench.stale_plan_choices(work, tso):
        progress(f"removing {shown_path(path)}: older than the tso binary")
        os.remove(path)


def interrupt(signum, frame):
    raise KeyboardInterrupt


# --------------------------------------------------------------------- main
def parser():
    ap = argparse.ArgumentParser(
        prog="reproduce.sh",
        description="Every experiment of the project in one run: TASO's table, PET's table, the "
                    "rule pipeline and, with a GPU, the CUDA runtime beside PyTorch; writes "
                    "OUT/results.md and PNG plots. Interrupt it at any time: the same command "
                    "resumes, skipping the rows kept in OUT.")
    ap.add_argument("--quick", action="store_true",
                    help="three models, batch 1, N=3, 3 rounds (about 7 minutes on an idle machine, "
                         "an estimate)")
    ap.add_argument("--out", help="results folder (default experiments/results/full, or "
                                  "experiments/results/quick with --quick)")
    ap.add_argument("--models", help="the shared models' folder (default ../shared/models "
                                     "beside the repository)")
    ap.add_argument("--rounds", type=int, help=f"alternating rounds (default {MIN_ROUNDS}; "
                                              "--quick: 3)")
    ap.add_argument("--threads", type=int, default=cpu_bench.usable_cpus(),
                    help="threads of both runtimes (default: usable cores)")
    ap.add_argument("--seed", type=int, default=0, help="weights and inputs (default 0)")
    ap.add_argument("--rows", default="",
                    help="run only these rows: comma-separated patterns of row names, e.g. "
                         "'taso/squeezenet1_1,pipeline/*.n3' (--list shows the names)")
    ap.add_argument("--skip", default="", help="leave out these rows (patterns, as --rows)")
    ap.add_argument("--list", action="store_true", help="print the rows and their estimates, "
                                                        "run nothing")
    ap.add_argument("--no-build", action="store_true", help="use build/tso as it is")
    ap.add_argument("--tso", help="a tso binary to use instead of build/tso (nothing is built)")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per process (default 3600)")
    return ap


def main():
    ap = parser()
    a = ap.parse_args()
    profile = "quick" if a.quick else "full"
    p = PROFILES[profile]
    a.rounds = a.rounds or p["rounds"]
    if a.rounds < 1 or a.threads < 1:
        ap.error("--rounds and --threads >= 1")
    out = os.path.abspath(a.out or os.path.join(ROOT, "experiments", "results", profile))
    models = os.path.abspath(a.models or os.path.join(ROOT, "..", "shared", "models"))
    if not os.path.isdir(models):
        ap.error(f"no models folder {models} (--models DIR)")
    work = os.path.join(out, "work")
    tso = os.path.abspath(a.tso or os.path.join(ROOT, "build", "tso"))
    if not (a.no_build or a.tso or a.list):
        build()
    if not os.path.isfile(tso):
        sys.exit(f"reproduce.sh: no {shown_path(tso)}; build the tso target (or drop --no-build)")
    common = ["--threads", str(a.threads), "--rounds", str(a.rounds), "--seed", str(a.seed),
              "--cache", work, "--tso", tso, "--models-dir", models, "--timeout", str(a.timeout)]
    cpu, _ = cpu_bench.options(common + ["--runs", str(p["runs"]),
                                         "--heavy-runs", str(p["heavy_runs"])])
    pet = pet_bench.options(common + ["--runs", str(p["pet_runs"]),
                                      "--heavy-runs", str(p["pet_heavy_runs"])])
    gpu_opts = gpu_bench.options(["--rounds", str(a.rounds), "--runs", str(p["gpu_runs"]),
                                  "--seed", str(a.seed), "--cache", work, "--tso", tso,
                                  "--models-dir", models, "--timeout", str(a.timeout)])
    ctx = {"cpu": cpu, "pet": pet, "gpu": gpu_opts, "tso": tso, "work": work,
           "timeout": a.timeout, "shared": dict(cpu_bench.find_models(models))}
    gpu, gpu_note = gpu_status()
    split = lambda s: [x.strip() for x in s.split(",") if x.strip()]
    rows = select(plan(a, p, ctx, gpu), split(a.rows), split(a.skip))
    total = sum(r.estimate_s for r in rows)
    if a.list:
        for r in rows:
            print(f"{r.id:<34} about {duration(r.estimate_s)}")
        print(f"{len(rows)} rows, about {duration(total)} on an idle machine (an estimate)")
        return
    if not rows:
        ap.error("no row left (--rows / --skip)")

    command = " ".join(shlex.quote(x) for x in ["experiments/reproduce.sh"] + sys.argv[1:])
    machine = repro_report.machine(a, tso, profile, command, gpu_note)
    for k, v in machine:
        print(f"{k:<9} {v}", file=sys.stderr)
    progress(f"{len(rows)} rows, about {duration(total)} on an idle machine (an estimate); "
             f"results in {shown_path(out)}")
    os.makedirs(work, exist_ok=True)
    remove_stale_costs(work, tso)
    signal.signal(signal.SIGTERM, interrupt)  # as Ctrl-C: keep the rows, write results.md
    records, interrupted = run_rows(rows, out)
    machine.append(("load end", " ".join(f"{x:.2f}" for x in loadavg())))
    plots = repro_plots.write_all(out, records)
    text = repro_report.results_md(machine, rows, records, plots, gpu, gpu_note, interrupted)
    write_atomically(os.path.join(out, "results.md"), text)
    progress(f"wrote {shown_path(os.path.join(out, 'results.md'))} ({len(records)} of {len(rows)} "
             f"rows) and {len(plots)} plots")
    if interrupted:
        sys.exit(130)


if __name__ == "__main__":
    main()
