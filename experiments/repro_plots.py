"""The PNG plots of experiments/reproduce.py, from the rows kept in OUT/rows:
per-model speedups with the peers, predicted vs measured latency (with the
diagonal), the search's best cost over time for the three largest models,
PET's speedups and, with a GPU, TASO's table there. A plot whose rows are
not measured yet is not drawn.
"""
import os

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

import references  # noqa: E402

DPI = 120


def timed(x):
    return isinstance(x, (list, tuple)) and len(x) == 2


def taso_results(records):
    """[(stem, times, optimize)] of the TASO rows measured."""
    out = []
    for rid, rec in records.items():
        res = rec["result"]
        if rid.startswith("taso/") and "times" in res:
            out.append((rid.split("/", 1)[1], res["times"], res["optimize"]))
    return out


def optimization_plot(path, models, speedups, baseline, relative, titles):
    """Two panels. Above, per model [(stem, times, optimize)]: the
    optimization's measured speedup on each runtime ({label: (input config,
    output config)}), the predicted one, and the published GPU figures
    hatched beside. Below, each configuration of `relative` ({label: config})
    as speed relative to the `baseline` configuration. `titles`: (above,
    below's y label, below)."""
    names = [s for s, _, _ in models]
    published = ["TASO, published (GPU)", "Tensat, published (GPU)"]
    series = {label: [] for label in [*speedups, "predicted (tso's cost model)", *published]}
    below = {label: [] for label in relative}
    for stem, t, opt in models:
        ok = lambda *ks: all(timed(t.get(k)) for k in ks)
        for label, (before, after) in speedups.items():
            series[label].append(t[before][0] / t[after][0] if ok(before, after) else 0)
        pc = opt.get("report", {}).get("predicted_cost_us")
        series["predicted (tso's cost model)"].append(pc["before"] / pc["after"] if pc else 0)
        ref = references.tensat(stem)
        series[published[0]].append(ref["taso_speedup"] if ref else 0)
        series[published[1]].append(ref["tensat_speedup"] if ref else 0)
        for label, cfg in relative.items():
            below[label].append(t[baseline][0] / t[cfg][0] if ok(baseline, cfg) else 0)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(max(7, 1.4 * len(names)), 8))
    bars(ax1, names, series, hatched=set(published))
    ax1.set_ylabel("speedup, input / optimized")
    ax1.set_title(titles[0])
    bars(ax2, names, below, hatched=set())
    ax2.set_ylabel(titles[1])
    ax2.set_title(titles[2])
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def speedup_plot(path, models):
    """TASO's table on this CPU: speedups on both runtimes, and each
    configuration against ONNX Runtime on the input file."""
    optimization_plot(
        path, models, {"tso runtime, measured": ("tso", "tso_opt"),
                       "ONNX Runtime, measured": ("ort", "ort_opt")},
        "ort", {"ORT on tso output": "ort_opt", "tso on input": "tso", "tso on tso output": "tso_opt"},
        ("tso optimize: speedup per model (this CPU, batch 1; hatched: published, GPU)",
         "speed relative to ORT on the input",
         "ONNX Runtime and tso's CPU runtime, same run (min over rounds)"))


def bars(ax, names, series, hatched):
    n = len(series)
    width = 0.8 / n
    for k, (label, values) in enumerate(series.items()):
        xs = [i + (k - (n - 1) / 2) * width for i in range(len(names))]
        ax.bar(xs, values, width, label=label, hatch="//" if label in hatched else None,
               alpha=0.6 if label in hatched else 1.0)
    ax.axhline(1.0, color="black", linewidth=0.8)
    # Speedups sit near 1: start the axis just below the lowest bar, not at 0.
    lowest = min((v for vs in series.values() for v in vs if v > 0), default=1.0)
    ax.set_ylim(bottom=min(0.9, 0.95 * lowest))
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=20, ha="right")
    ax.legend(fontsize=8, ncol=2)


def prediction_plot(path, models):
    """Predicted vs measured end-to-end latency on tso's runtime, log-log,
    with the diagonal and the 15% band."""
    fig, ax = plt.subplots(figsize=(6, 6))
    lo, hi = float("inf"), 0.0
    for stem, t, opt in models:
        rep = opt.get("report")
        if not rep:
            continue
        pc = rep["predicted_cost_us"]
        kept_input = rep["speed_check"]["written"] == "input"
        points = [(pc["before"] / 1000, t.get("tso"), "o"),
                  ((pc["before"] if kept_input else pc["after"]) / 1000, t.get("tso_opt"), "x")]
        for pred, meas, marker in points:
            if timed(meas):
                ax.scatter(meas[0], pred, marker=marker, label=f"{stem} ({'input' if marker == 'o' else 'output'})")
                lo, hi = min(lo, pred, meas[0]), max(hi, pred, meas[0])
    if hi == 0:
        plt.close(fig)
        return False
    line = [lo / 1.3, hi * 1.3]
    ax.plot(line, line, color="black", linewidth=0.8, label="predicted = measured")
    ax.fill_between(line, [v * 0.85 for v in line], [v * 1.15 for v in line], color="grey",
                    alpha=0.2, label="within 15%")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured, tso run min (ms)")
    ax.set_ylabel("predicted by tso optimize's cost model (ms)")
    ax.set_title("Predicted vs measured latency, this CPU")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return True


def search_plot(path, models):
    """The best cost over the search's time (report's search.best_over_time),
    relative to the input's, for the three models of largest input cost."""
    traced = []
    for stem, _, opt in models:
        rep = opt.get("report")
        if rep and rep["search"].get("best_over_time"):
            traced.append((rep["predicted_cost_us"]["before"], stem, rep["search"]))
    traced = sorted(traced, reverse=True)[:3]
    if not traced:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for _, stem, s in traced:
        pts = s["best_over_time"]
        first = pts[0]["best_cost_us"]
        # Searching only: on a CPU measuring new operators' costs takes most of the wall time.
        xs = [p["seconds"] - p["measuring_seconds"] for p in pts]
        xs.append(max(xs[-1], s["seconds"] - s.get("measuring_seconds", 0)))
        ys = [100 * p["best_cost_us"] / first for p in pts] + [100 * pts[-1]["best_cost_us"] / first]
        ax.step(xs, ys, where="post", label=f"{stem} ({s['expansions']} expansions, {s['stop_reason']})")
    ax.set_xlabel("seconds of searching (time spent measuring operator costs excluded)")
    ax.set_ylabel("best predicted cost, % of the input's")
    ax.set_title("tso optimize --device cpu: search progress")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return True


def pet_plot(path, records):
    rows = []
    for rid, rec in sorted(records.items()):
        res = rec["result"]
        if rid.startswith("pet/") and "times" in res:
            t = res["times"]
            if all(timed(t.get(k)) for k in ("input", "full", "partial")):
                rows.append((rid.split("/", 1)[1], t))
    if not rows:
        return False
    names = [n for n, _ in rows]
    series = {"fully equivalent rules": [t["input"][0] / t["full"][0] for _, t in rows],
              "with partial rules": [t["input"][0] / t["partial"][0] for _, t in rows]}
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(names)), 4))
    bars(ax, names, series, hatched=set())
    ax.set_ylabel("speedup over the input (min over rounds)")
    ax.set_title("Partial equivalence on tso's CPU runtime")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return True


def gpu_plot(path, records):
    """TASO's table on the GPU: tso optimize's speedup on the CUDA runtime,
    and each configuration against PyTorch eager."""
    rows = []
    for rid, rec in sorted(records.items()):
        res = rec["result"]
        if rid.startswith("gpu/") and "times" in res:
            rows.append((rid.split("/", 1)[1], res["times"], res["optimize"]))
    if not rows:
        return False
    optimization_plot(
        path, rows, {"tso's CUDA runtime, measured": ("tso", "tso_opt")},
        "torch_eager", {"tso on input": "tso", "tso on tso output": "tso_opt",
                        "PyTorch + CUDA graph": "torch_graph", "torch.compile": "torch_compile"},
        ("tso optimize --device cuda: speedup per model (batch 1; hatched: published)",
         "speed relative to PyTorch eager",
         "tso's CUDA runtime and PyTorch on the GPU, same run (min over rounds)"))
    return True


def write_all(out, records):
    """[(path, caption)] of the plots written into `out`."""
    models = taso_results(records)
    done = []
    if models:
        p = os.path.join(out, "speedup.png")
        speedup_plot(p, models)
        done.append((p, "Per-model speedup of tso optimize on this CPU (measured on both runtimes, "
                        "and predicted), with TASO's and Tensat's published GPU speedups hatched; "
                        "below, each configuration against ONNX Runtime on the input."))
        p = os.path.join(out, "predicted_vs_measured.png")
        if prediction_plot(p, models):
            done.append((p, "Predicted vs measured end-to-end latency on tso's CPU runtime; the "
                            "line is equality, the band 15%."))
        p = os.path.join(out, "search_progress.png")
        if search_plot(p, models):
            done.append((p, "The search's best predicted cost over time, for the three models of "
                            "largest input cost."))
    p = os.path.join(out, "pet_speedup.png")
    if pet_plot(p, records):
        done.append((p, "PET's table as bars: speedup over the input with the fully equivalent "
                        "rules and with the partial rules."))
    p = os.path.join(out, "gpu_speedup.png")
    if gpu_plot(p, records):
        done.append((p, "TASO's table on the GPU: tso optimize's speedup on the CUDA runtime "
                        "(measured and predicted), TASO's and Tensat's published GPU speedups "
                        "hatched; below, each configuration against PyTorch eager."))
    return done
