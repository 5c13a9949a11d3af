#!/usr/bin/env python3
"""TASO's table on the GPU: per model at batch 1, tso's CUDA runtime on the
input file and on the file `tso optimize --device cuda` makes of it (costs
measured on the GPU), beside PyTorch eager, eager captured in a CUDA graph,
and torch.compile (experiments/torch_bench.py), by the protocol of
../shared/MEASURING.md. Called by experiments/gpu_bench.sh and by
reproduce.py's gpu rows; see `gpu_bench.sh --help` and experiments/README.md.

Per model: the file is filled (cpu_bench.prepared) or written by `tso zoo`
(NasRNN), optimized once (cpu_bench.optimized with device cuda: its own cost
cache, cuda_costs.json), then one untimed warm-up process per configuration
(it also fills Inductor's cache, so later torch.compile processes do not
compile again) and R rounds alternating tso input, tso output, torch eager,
torch graph, torch compile, each a fresh process of K timed runs: the minimum
of the rounds' minimums and the median of their medians.
"""
import argparse
import os
import re
import sys
import time

import cpu_bench
import pet_bench
from cpu_bench import ROOT, TSO_LATENCY, process_times, progress, shown_path

MODELS = ["squeezenet1_1", "resnet50", "resnext50_32x4d", "inception_v3", "nasrnn",
          "bert_base_seq128", "nasnetalarge"]  # TASO's table
TORCH_BENCH = os.path.join(ROOT, "experiments", "torch_bench.py")
TORCH_LINE = re.compile(r"^torch min_ms=([0-9.]+) median_ms=([0-9.]+) runs=\d+\s*$", re.M)
TORCH_MODES = ["eager", "graph", "compile"]
CONFIGS = ["tso", "tso_opt"] + [f"torch_{m}" for m in TORCH_MODES]
COST_CACHE = cpu_bench.cost_cache_name("cuda")  # in --cache, beside the CPU's
ZOO = {"nasrnn"}


def torch_python():
    """$PYTHON, else the GPU machine's PyTorch environment (../shared/GPU.md)
    where it exists, else this interpreter."""
    if os.environ.get("PYTHON"):
        return os.environ["PYTHON"]
    lent = "/opt/torch/.venv/bin/python"
    return lent if os.access(lent, os.X_OK) else sys.executable


def model_file(stem, a):
    """(path, None) or (None, error): the file both runtimes' rows time."""
    if stem in ZOO:
        return pet_bench.zoo_model(stem, 1, a)
    src = os.path.join(a.models_dir, f"{stem}.graph.onnx")
    if not os.path.isfile(src):
        return None, f"no {shown_path(src)}"
    return cpu_bench.prepared(stem, src, True, a)


def time_tso(path, runs, a):
    """((min, median), None) or (None, error): `tso run --device cuda`, which
    captures the run in a CUDA graph and times `runs` replays after its own
    warm-up."""
    cmd = [a.tso, "run", path, "--device", "cuda", "--iters", str(runs)]
    return process_times(cmd, TSO_LATENCY, "latency median", a.timeout, median_first=True)


def time_torch(stem, mode, runs, a):
    cmd = [a.python, TORCH_BENCH, stem, "--mode", mode, "--runs", str(runs), "--warmup",
           str(a.warmup), "--seed", str(a.seed)]
    return process_times(cmd, TORCH_LINE, "torch min_ms=", a.timeout)


def timers(stem, path, opt, a):
    """[(config, time(n))] in the order the rounds alternate them."""
    out = [("tso", lambda n: time_tso(path, n, a))]
    if opt and "path" in opt:
        out.append(("tso_opt", lambda n: time_tso(opt["path"], n, a)))
    out += [(f"torch_{m}", lambda n, m=m: time_torch(stem, m, n, a)) for m in TORCH_MODES]
    return out


def bench_row(stem, a):
    """{"file", "times", "optimize"} or {"error"}: one model of the GPU table."""
    path, err = model_file(stem, a)
    if err:
        return {"error": err}
    opt = cpu_bench.optimized(stem, path, a, device="cuda")
    times = cpu_bench.alternate(stem, timers(stem, path, opt, a), a.rounds, min(a.runs, 3), a.runs)
    return {"file": shown_path(path), "times": times, "optimize": opt}


def timed(v):
    return isinstance(v, (list, tuple))


def best_torch(times):
    """(config, (min, median)) of the fastest PyTorch configuration by its
    minimum, or None when none was timed."""
    done = [(c, times[c]) for c in CONFIGS[2:] if timed(times.get(c))]
    return min(done, key=lambda ct: ct[1][0]) if done else None


def text_lines(results):
    """A plain table of bench_row results [(stem, result)] for gpu_bench.sh:
    minimums in ms; speedup = tso input / tso output; the last column, tso's
    output against the fastest PyTorch configuration."""
    head = ["tso input", "tso output", "speedup"] + [f"torch {m}" for m in TORCH_MODES] + [
        "tso out/torch"]
    w = max([len("model")] + [len(s) for s, _ in results])
    out = [f"{'model':<{w}}  " + "  ".join(f"{h:>13}" for h in head)]
    for stem, res in results:
        if "error" in res:
            out.append(f"{stem:<{w}}  failed: {res['error']}")
            continue
        t = res["times"]
        tso, opt, best = t.get("tso"), t.get("tso_opt"), best_torch(t)
        cells = [f"{t[c][0]:.3f}" if timed(t.get(c)) else "failed" if c in t else "-"
                 for c in ("tso", "tso_opt")]
        cells.append(f"{tso[0] / opt[0]:.2f}x" if timed(tso) and timed(opt) else "-")
        cells += [f"{t[c][0]:.3f}" if timed(t.get(c)) else "failed" for c in CONFIGS[2:]]
        cells.append(f"{opt[0] / best[1][0]:.2f}" if timed(opt) and best else "-")
        out.append(f"{stem:<{w}}  " + "  ".join(f"{c:>13}" for c in cells))
    for stem, res in results:
        if "error" in res.get("optimize", {}):
            out.append(f"{stem}, tso optimize failed: {res['optimize']['error']}")
        for c, v in res.get("times", {}).items():
            if isinstance(v, str):
                out.append(f"{stem}, {c} failed: {v}")
    return out


def parser():
    ap = argparse.ArgumentParser(prog="gpu_bench.sh", description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS),
                    help="comma-separated stems (default: TASO's table)")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "..", "shared", "models"),
                    help="default ../shared/models (from the repository root)")
    ap.add_argument("--tso", default=os.path.join(ROOT, "build", "tso"), help="default build/tso")
    ap.add_argument("--python", default=None,
                    help="the Python with PyTorch for torch_bench.py (default $PYTHON, else "
                         "/opt/torch/.venv/bin/python where it exists, else this one)")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    ap.add_argument("--runs", type=int, default=200,
                    help="timed runs (tso: replays) per process (default 200)")
    ap.add_argument("--warmup", type=int, default=20,
                    help="PyTorch's untimed runs per process (default 20)")
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "bench_models"),
                    help="filled models, optimized files, reports, the cost cache and Inductor's "
                         "cache (default build/bench_models)")
    ap.add_argument("--seed", type=int, default=0, help="weights and inputs (default 0)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per process (default 1800)")
    ap.add_argument("--optimize-flags", default="", help="extra flags for tso optimize, one string")
    ap.add_argument("--reoptimize", action="store_true",
                    help="optimize every model again, ignoring the optimized files in --cache")
    return ap


def options(argv):
    """The settings of gpu_bench.sh ARGV..., checked, paths absolute (also for
    reproduce.py's gpu rows). Points Inductor's cache into --cache, for the
    torch processes this one starts."""
    ap = parser()
    a = ap.parse_args(argv)
    if a.rounds < 1 or a.runs < 1 or a.warmup < 3:
        ap.error("--rounds, --runs >= 1; --warmup >= 3 (torch.compile records its CUDA graphs in "
                 "the first runs)")
    a.models = [m.strip() for m in a.models.split(",") if m.strip()]
    unknown = [m for m in a.models if m not in MODELS]
    if unknown:
        ap.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    a.tso = os.path.abspath(a.tso)
    a.cache = os.path.abspath(a.cache)
    a.models_dir = os.path.abspath(a.models_dir)
    a.python = a.python or torch_python()
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(a.cache, "inductor"))
    return a


def main():
    a = options(sys.argv[1:])
    if not os.path.isfile(a.tso):
        sys.exit(f"gpu_bench.sh: no tso binary at {a.tso} (build the tso target)")
    start = time.monotonic()
    results = []
    for stem in a.models:
        progress(f"{stem}: {len(results) + 1} of {len(a.models)}")
        results.append((stem, bench_row(stem, a)))
    for line in text_lines(results):
        print(line)
    print(f"\n{time.monotonic() - start:.0f} s in all; PyTorch from {a.python}")


if __name__ == "__main__":
    main()
