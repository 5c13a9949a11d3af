"""OUT/results.md of experiments/reproduce.py: the setting, then TASO's
table, PET's table, the pipeline's tables and the GPU's, from the rows kept
in OUT/rows. Measured figures and published ones (references.py) stand in
separate columns, the published ones labelled with their hardware. A row
not measured yet reads "not yet".
"""
import datetime
import os
import platform

import cpu_bench
import cpu_bench_optimized
import gpu_bench
import pet_bench
import pipeline_bench
import references
from cpu_bench import geomean, shown_path, version

NOT_YET = "not yet"
BUSY_WARNING = 0.25  # share of the CPUs busy before a row above which it is disturbed


def machine(a, tso, profile, command, gpu_note):
    """[(key, value)]: what a reader needs to judge the figures."""
    name, logical, physical, isa = cpu_bench.cpu_model()
    load = cpu_bench.loadavg() or [0, 0, 0]
    built = datetime.datetime.fromtimestamp(os.path.getmtime(tso)).strftime("%Y-%m-%d %H:%M")
    rounds = f"{a.rounds} alternating rounds"
    if a.rounds < 5:
        rounds += " (fewer than the 5 of ../shared/MEASURING.md: a quick look, not a result)"
    lines = [
        ("date", datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")),
        ("cpu", f"{name}; {logical} logical cores" + (f", {physical} physical" if physical else "")
                + f", {cpu_bench.usable_cpus()} usable; {' '.join(isa) or 'no avx2'}"),
        ("threads", f"{a.threads} (ORT intra_op_num_threads, tso --threads)"),
        ("ort", f"onnxruntime {version('onnxruntime')}: CPUExecutionProvider, ORT_ENABLE_ALL, "
                "inter_op_num_threads 1, sequential"),
        ("tso", f"{shown_path(tso)} (built {built}; source tree {cpu_bench.git_head()}), "
                f"oneDNN from onednn-devel-cpu-gomp {version('onednn-devel-cpu-gomp')}"),
        ("python", f"{platform.python_version()}, numpy {version('numpy')}, onnx {version('onnx')}, "
                   f"matplotlib {version('matplotlib')}"),
        ("load", " ".join(f"{x:.2f}" for x in load)),
        ("profile", f"{profile}: {rounds}; each configuration a fresh process, one untimed "
                    "warm-up process each first; minimum over the rounds and median of their "
                    "medians"),
        ("gpu", gpu_note),
        ("command", command),
    ]
    if load[0] > cpu_bench.LOAD_WARNING:
        lines.append(("warning", f"load average {load[0]:.2f} at start: something else is "
                                 "running; ../shared/MEASURING.md asks for an idle machine"))
    return lines


def timed(x):
    return isinstance(x, (list, tuple)) and len(x) == 2


def tuples(times):
    """{config: (min, median) or error} from its JSON form."""
    return {k: tuple(v) if timed(v) else v for k, v in times.items()}


def result(records, row_id):
    rec = records.get(row_id)
    return rec["result"] if rec else None


def cell(t):
    return f"{t[0]:.2f} ({t[1]:.2f})" if timed(t) else ("failed" if t else "-")


def ratio(a, b):
    return a[0] / b[0] if timed(a) and timed(b) else None


def x(v):
    return f"{v:.2f}x" if v else "-"


def published_speedups(stem):
    """(TASO's, Tensat's) published GPU speedup cells of a model."""
    ref = references.tensat(stem)
    return (f"{ref['taso_speedup']:.3f}x", f"{ref['tensat_speedup']:.3f}x") if ref else ("-", "-")


def measured_models(models, out):
    """Yields (stem, times, predicted speedup, written cell, published cells)
    of each measured model [(stem, result or None)] of a TASO table, in order;
    appends the row of each other model (12 columns, the published speedups
    last) to `out` in its place."""
    for stem, res in models:
        refs = published_speedups(stem)
        if res is None or "error" in res:
            out.append(f"| {stem} | {not_measured(res)} | | | | | | | | | {refs[0]} | {refs[1]} |")
            continue
        pred, written = optimization_cells(res["optimize"])
        if res.get("same_file"):
            written += " (the input file)"
        yield stem, tuples(res["times"]), pred, written, refs


def optimization_cells(opt):
    """(predicted speedup or None, the written cell) of a tso optimize result."""
    if "report" not in opt:
        return None, "failed: " + opt.get("error", "?").replace("|", "\\|")
    pc = opt["report"]["predicted_cost_us"]
    return (pc["before"] / pc["after"] if pc["after"] > 0 else None,
            cpu_bench_optimized.written_cell(opt))


def not_measured(res):
    """The cell of a row without figures: not measured yet, or its failure."""
    return NOT_YET if res is None else "failed: " + res["error"].replace("|", "\\|")


# ------------------------------------------------------------- TASO's table
def taso_rows(rows, records):
    """[(stem, result or None)] in the plan's order."""
    return [(r.id.split("/", 1)[1], result(records, r.id)) for r in rows if r.id.startswith("taso/")]


def taso_section(rows, records):
    models = taso_rows(rows, records)
    if not models:
        return []
    out = ["## TASO's table: end to end at batch 1 on this CPU", "",
           "Latency in ms, minimum over the rounds (median of the rounds' medians). *input*: the "
           "model's file; *tso output*: the file `tso optimize --device cpu` wrote (its own speed "
           "check keeps the input graph unless the optimized one is faster by its minimum, its median "
           "and in four rounds in five, eleven in fifteen over two stages: *written*). "
           "Predicted speedup: the cost of the input over that of the search's result in tso "
           "optimize's report (per-operator costs measured on this CPU). Measured speedups divide "
           "minimums of the same run. The last two columns are published figures measured on a "
           "GPU by others, not here (sources below the table).", "",
           "| model | ORT input | ORT tso output | tso input | tso output | predicted speedup "
           "| measured speedup, tso | measured speedup, ORT | tso / ORT, input | written "
           "| published, GPU: TASO | published, GPU: Tensat |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |"]
    measured, predicted, changed = [], [], []
    for stem, t, pred, written, refs in measured_models(models, out):
        tso_speedup = ratio(t.get("tso"), t.get("tso_opt"))
        if tso_speedup:
            measured.append(tso_speedup)
            if not written.startswith("input"):
                changed.append(tso_speedup)
        if pred:
            predicted.append(pred)
        tso_vs_ort = ratio(t.get("tso"), t.get("ort"))
        out.append(f"| {stem} | {cell(t.get('ort'))} | {cell(t.get('ort_opt'))} | {cell(t.get('tso'))} "
                   f"| {cell(t.get('tso_opt'))} | {x(pred)} | {x(tso_speedup)} "
                   f"| {x(ratio(t.get('ort'), t.get('ort_opt')))} "
                   f"| {f'{tso_vs_ort:.2f}' if tso_vs_ort else '-'} | {written} | {refs[0]} | {refs[1]} |")
    out.append("")
    if measured:
        out.append(f"Geometric mean over {len(measured)} models: measured speedup on tso's runtime "
                   f"{geomean(measured):.3f}x, predicted {geomean(predicted):.3f}x.  ")
    if len(changed) < len(measured):
        out.append(f"{len(measured) - len(changed)} of the {len(measured)} files tso optimize wrote "
                   "hold the input graph (*written*: input; *the input file*: byte for byte): "
                   "their measured speedup is the spread of timing one graph twice"
                   + (f"; over the {len(changed)} other models the geometric mean is "
                      f"{geomean(changed):.3f}x.  " if changed else ".  "))
    for stem, res in models:
        for key, label in (("tso", "tso input"), ("tso_opt", "tso output"), ("ort", "ORT input"),
                           ("ort_opt", "ORT output")):
            v = res and "times" in res and res["times"].get(key)
            if isinstance(v, str):
                out.append(f"{stem}, {label} failed: {v}  ")
    out += ["", "Published (GPU, not this machine; never compared to the columns before them):", "",
            f"- TASO and Tensat columns: {references.TENSAT}: runtime speedup over the input graph, "
            f"measured on {references.TENSAT_HARDWARE}. ResNet-50 is not in that table. Their "
            "model variants may differ from these files (e.g. SqueezeNet 1.0 or 1.1)."]
    out += [f"- {n}" for n in references.TASO_NOTES]
    with_opt = [(s, tuples(r["times"]), r["optimize"]) for s, r in models
                if r and "times" in r]
    if with_opt:
        title, text, header, units, p_rows, notes, summary = cpu_bench_optimized.sections(with_opt)[1]
        out += ["", "### Predicted vs measured on tso's CPU runtime", "", text, ""]
        out += cpu_bench_optimized.md_table(header, units, p_rows, notes) + [""]
        out += [l + "  " for l in summary]
    return out + [""]


# -------------------------------------------------------------- PET's table
def pet_section(rows, records):
    ids = [r.id for r in rows if r.id.startswith("pet/")]
    if not ids:
        return []
    done, missing = [], []
    for i in ids:
        stem, batch = i.split("/", 1)[1].rsplit(".b", 1)
        res = result(records, i)
        if res is None:
            missing.append(i)
            continue
        if "times" in res:
            res = dict(res, times=tuples(res["times"]))
        done.append((stem, int(batch), res))
    out = ["## PET's table: fully equivalent rules only vs with partial rules", "",
           "On tso's CPU runtime, the same run: each model optimized by `tso optimize --device cpu` "
           "twice, *full* with every rule file but `substitutions/pet_mutants.rules`, *partial* "
           "with all of them, starting from the full file (experiments/pet_bench.py), then the "
           "three files timed in alternating rounds.", ""]
    out += pet_bench.table_lines(done) if done else []
    if missing:
        out += ["", f"{NOT_YET}: " + ", ".join(missing)]
    return out + [""]


# ----------------------------------------------------------------- pipeline
def count(v):
    return f"{v:,}" if isinstance(v, int) else "-"


def pipeline_section(rows, records, taso_models):
    gens = [(int(r.id.rsplit(".n", 1)[1]), result(records, r.id)) for r in rows
            if r.id.startswith("pipeline/generate.")]
    vers = [(int(r.id.rsplit(".n", 1)[1]), result(records, r.id)) for r in rows
            if r.id.startswith("pipeline/verify.")]
    out = ["## The pipeline: generation, verification, search", ""]
    if gens:
        ref = references.TASO_GENERATOR
        out += ["`tso generate --max-ops N --ops generator/taso.ops` (seed 1): the graphs after "
                "every stage, alone in its process. Wall time and peak resident memory measured "
                "by this script (the process's rusage). The last column is TASO's published "
                f"figure at N=4 ({ref['source']}).", "",
                "| stage | " + " | ".join(f"tso, N={n}" for n, _ in gens) + " | TASO, N=4 (published) |",
                "| --- | " + " | ".join("---:" for _ in gens) + " | ---: |"]
        taso_ref = {"graphs": ref["graphs"], "candidates": ref["candidates"], "written": ref["rules"]}
        for label, key in pipeline_bench.STAGES:
            cells = [count((g or {}).get("counts", {}).get(key)) if g and "counts" in g
                     else (NOT_YET if g is None else "failed") for _, g in gens]
            out.append(f"| {label} | " + " | ".join(cells) + f" | {taso_ref.get(key, '-')} |")
        for label, fmt in (("wall time", lambda g: f"{g['wall_s']:.1f} s"),
                           ("peak memory", lambda g: f"{g['peak_rss_mib']:,.0f} MiB")):
            cells = [fmt(g) if g else NOT_YET for _, g in gens]
            out.append(f"| {label} | " + " | ".join(cells)
                       + f" | {ref['time'] if label == 'wall time' else '-'} |")
        for n, g in gens:
            if g and "error" in g:
                out.append(f"\nN={n} failed: {g['error']}")
            elif g and g.get("step_seconds"):
                out.append(f"\nN={n} steps (s): " + ", ".join(
                    f"{k} {v:.1f}" for k, v in g["step_seconds"].items()))
        out += ["", references.TASO_GENERATOR_HERE + ".", ""]
    if vers:
        out += ["`tso verify` of the generated file (Z3, 2 jobs, 10 s a rule):", "",
                "| N | rules | verified | refuted | unknown | of them at the time limit "
                "| their share of proof time | wall time |",
                "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for n, v in vers:
            if v is None or "error" in v:
                out.append(f"| {n} | {NOT_YET if v is None else 'failed: ' + v['error']} "
                           "| | | | | | |")
                continue
            c = v["counts"]
            limit = (f"{count(v['timeouts'])} | {100 * v['timeout_share']:.0f}%"
                     if "timeouts" in v else "- | -")
            out.append(f"| {n} | {count(sum(c.values()))} | {count(c.get('verified'))} "
                       f"| {count(c.get('refuted'))} | {count(c.get('unknown'))} | {limit} "
                       f"| {v['wall_s']:.1f} s |")
        out.append("")
    out += search_lines(taso_models)
    return out + [""]


def search_lines(models):
    if not models:
        return []
    out = ["Search time per model: `tso optimize --device cpu` of TASO's table (defaults: "
           "alpha 1.05, 1000 expansions, stall 100, 60 s), from its report. *measuring*: the part "
           "spent timing new operator signatures on this CPU (outside the search's time limit; "
           "shown apart). The last two columns are published search times (TASO as run by Tensat's "
           f"authors, and Tensat; {references.TENSAT}), on other machines.", "",
           "| model | search, measuring excluded (s) | measuring costs (s) | expansions | stopped "
           "| improvements | last improvement (s, measuring excluded) | published: TASO (s) "
           "| published: Tensat (s) |",
           "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |"]
    for stem, res in models:
        ref = references.tensat(stem)
        refs = f"| {ref['taso_search_s']} | {ref['tensat_search_s']} |" if ref else "| - | - |"
        rep = res and res.get("optimize", {}).get("report")
        if not rep:
            out.append(f"| {stem} | {NOT_YET if res is None else 'failed'} | | | | | {refs}")
            continue
        s = rep["search"]
        trace = s.get("best_over_time")
        improvements = str(len(trace) - 1) if trace else NOT_YET
        last = (f"{trace[-1]['seconds'] - trace[-1]['measuring_seconds']:.2f}"
                if trace and len(trace) > 1 else "-")
        measuring = s.get("measuring_seconds", 0)
        out.append(f"| {stem} | {s['seconds'] - measuring:.2f} | {measuring:.2f} "
                   f"| {s['expansions']} | {s['stop_reason']} | {improvements} | {last} {refs}")
    out += ["", references.TENSAT_ISSUE_NOTE]
    return out


# ---------------------------------------------------------------------- GPU
def gpu_rows(rows, records):
    return [(r.id.split("/", 1)[1], result(records, r.id)) for r in rows if r.id.startswith("gpu/")]


def gpu_section(rows, records, gpu, gpu_note):
    out = ["## TASO's table on the GPU: tso's CUDA runtime beside PyTorch", ""]
    if not gpu:
        return out + [f"Skipped: {gpu_note}. On a machine where `nvidia-smi` lists a GPU this part "
                      "runs experiments/gpu_bench.py for each model of TASO's table: tso's CUDA "
                      "runtime on the input file and on `tso optimize --device cuda`'s output, "
                      "beside PyTorch eager, eager with a CUDA graph and torch.compile "
                      "(experiments/torch_bench.py).", ""]
    models = gpu_rows(rows, records)
    out += [f"On {gpu_note}, batch 1. Latency in ms, minimum over the rounds (median of the "
            "rounds' medians), each configuration a fresh process. *tso output*: the file `tso "
            "optimize --device cuda` wrote (costs measured on this GPU; its speed check keeps the "
            "input graph unless the optimized one is faster by its minimum, its median and in four "
            "rounds in five, eleven in fifteen over two stages). PyTorch "
            "(experiments/torch_bench.py): eager, the same captured in a CUDA graph, and "
            "torch.compile with mode reduce-overhead; fp32 with TF32 on in both tso and PyTorch. "
            "The last column but two divides tso's output by the fastest PyTorch configuration "
            "(below 1: tso faster). The last two are published GPU figures of others (sources "
            "under TASO's table above).", "",
            "| model | tso input | tso output | predicted speedup | measured speedup | torch eager "
            "| torch + CUDA graph | torch.compile | tso output / fastest torch | written "
            "| published: TASO | published: Tensat |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |"]
    for stem, t, pred, written, refs in measured_models(models, out):
        best = gpu_bench.best_torch(t)
        vs_torch = ratio(t.get("tso_opt"), best[1]) if best else None
        out.append(f"| {stem} | {cell(t.get('tso'))} | {cell(t.get('tso_opt'))} | {x(pred)} "
                   f"| {x(ratio(t.get('tso'), t.get('tso_opt')))} | {cell(t.get('torch_eager'))} "
                   f"| {cell(t.get('torch_graph'))} | {cell(t.get('torch_compile'))} "
                   f"| {f'{vs_torch:.2f}' if vs_torch else '-'} | {written} | {refs[0]} | {refs[1]} |")
    out.append("")
    for stem, res in models:
        for key, v in (res or {}).get("times", {}).items():
            if isinstance(v, str):
                out.append(f"{stem}, {key} failed: {v}  ")
    return out + [""]


def gpu_part(rows, records, gpu, gpu_note):
    if not gpu:
        return f"the GPU part skipped: {gpu_note}"
    models = gpu_rows(rows, records)
    failed = [s for s, r in models if r and "error" in r]
    missing = [s for s, r in models if r is None]
    if missing:
        return f"the GPU part, {len(models) - len(missing)} of {len(models)} models"
    return "the GPU part too" + (f" ({', '.join(failed)} failed)" if failed else "")


# --------------------------------------------------------------------- file
def disturbed_rows(records, done):
    """The rows that other processes disturbed: more than a quarter of the
    CPUs busy in the second before the row (reproduce.cpu_busy); rows kept
    before that was recorded by a load average above 0.5, which also counts
    the run's own row before."""
    busy, loaded = [], []
    for i in done:
        rec = records[i]
        if rec.get("busy_at_start") is not None:
            if rec["busy_at_start"] > BUSY_WARNING:
                busy.append(f"{i} ({rec['busy_at_start']:.0%})")
        elif rec.get("load_at_start", [0])[0] > cpu_bench.LOAD_WARNING:
            loaded.append(f"{i} ({rec['load_at_start'][0]:.2f})")
    out = []
    if busy:
        out += ["Rows started while other processes kept more than a quarter of the CPUs busy "
                "(disturbed): " + ", ".join(busy) + "."]
    if loaded:
        out += ["Rows measured with a load average above 0.5 at their start (disturbed, or the "
                "run's own row before: these rows predate the CPU-busy check): "
                + ", ".join(loaded) + "."]
    return out


def results_md(machine_lines, rows, records, plots, gpu, gpu_note, interrupted):
    done = [r.id for r in rows if r.id in records]
    missing = [r.id for r in rows if r.id not in records]
    out = ["# tso: the project's results, reproduced", "", "```"]
    out += [f"{k:<9} {v}" for k, v in machine_lines]
    out += ["```", "",
            f"Rows: {len(done)} of {len(rows)} measured"
            + (" (the run was interrupted: the same command resumes)" if interrupted else "")
            + (f"; {NOT_YET}: {', '.join(missing)}" if missing else "") + ".  ",
            "Parts run: the CPU tables; " + gpu_part(rows, records, gpu, gpu_note) + ".",
            ""]
    taso = taso_rows(rows, records)
    out += taso_section(rows, records)
    out += pet_section(rows, records)
    out += pipeline_section(rows, records, taso)
    out += gpu_section(rows, records, gpu, gpu_note)
    if plots:
        out += ["## Plots", ""]
        for path, caption in plots:
            out += [f"![{os.path.basename(path)}]({os.path.basename(path)})", "", caption, ""]
    out += disturbed_rows(records, done)
    return "\n".join(out) + "\n"
