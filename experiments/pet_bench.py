#!/usr/bin/env python3
"""Partial equivalence on tso's CPU runtime (issue 15): per model and batch,
the input file, the file `tso optimize --device cpu` makes with the fully
equivalent rules only, and the one it makes of that file with the partial
rules too (substitutions/pet_mutants.rules), timed end to end by the protocol of
../shared/MEASURING.md. Called by experiments/pet_bench.sh; see
`pet_bench.sh --help` and experiments/README.md.

Per (model, batch): CSRNet and ResNet-18 come from `tso zoo --batch B`, the
shared models are filled once with seeded weights (fill_weights.py) and read
at batch B with `--batch B`; both optimizations share one cache of measured
costs. Then one untimed warm-up process per configuration and R rounds
alternating input, full, partial, each a fresh `tso run` process of K timed
runs: the minimum of the rounds' minimums and the median of their medians.
The partial rules the search applied come from its report; their corrections
are timed on the optimized file with `tso run --profile` (the steps of the
nodes named .../correction/...).
"""
import argparse
import filecmp
import json
import os
import re
import shlex
import subprocess
import sys
import time

import cpu_bench
from cpu_bench import ROOT, first_line, progress, run_process, shown_path, time_tso

ZOO = {"csrnet", "resnet18"}  # this table's models from tso zoo
BATCHED = {"csrnet", "resnet18"}  # tso zoo models that take --batch
MODELS = ["csrnet", "resnet18", "inception_v3", "bert_base_seq128"]
PET_RULES = "pet_mutants.rules"
COST_CACHE = "pet_costs.json"
STEP = re.compile(r"^\s*([0-9.]+)\s+[0-9.]+%\s+.*node '([^']*)'", re.M)


def rule_files(partial):
    d = os.path.join(ROOT, "substitutions")
    return sorted(os.path.join(d, f) for f in os.listdir(d)
                  if f.endswith(".rules") and (partial or f != PET_RULES))


def zoo_model(stem, batch, a):
    """(path, None) or (None, error): `tso zoo STEM` at this batch in the
    cache, written again when the tso binary is newer (nasrnn has batch 1
    only, and no --batch flag)."""
    os.makedirs(a.cache, exist_ok=True)
    out = os.path.join(a.cache, f"{stem}.b{batch}.onnx")
    if not (os.path.isfile(out) and os.path.getmtime(out) > os.path.getmtime(a.tso)):
        progress(f"{stem} b{batch}: tso zoo {stem}" + (f" --batch {batch}" if stem in BATCHED else ""))
        flags = ["--batch", str(batch)] if stem in BATCHED else []
        _, err = run_process([a.tso, "zoo", stem, "--seed", str(a.seed), "-o", out] + flags,
                             a.timeout)
        if err:
            return None, f"tso zoo: {err}"
    return out, None


def model_file(stem, batch, a):
    """(path, flags for tso on it) or (None, error): the model at this batch."""
    if stem in ZOO:
        out, err = zoo_model(stem, batch, a)
        return (out, []) if out else (None, err)
    src = os.path.join(a.models_dir, f"{stem}.graph.onnx")
    if not os.path.isfile(src):
        return None, f"no {src}"
    path, err = cpu_bench.prepared(stem, src, True, a)
    if err:
        return None, err
    return path, ([] if batch == 1 else ["--batch", str(batch)])


def optimize(stem, batch, path, flags, partial, a):
    """{"path", "report", "seconds"} or {"error"}: reused while newer than the
    input and the tso binary and made by the same command."""
    kind = "partial" if partial else "full"
    base = os.path.join(a.cache, f"{stem}.b{batch}.{kind}")
    out, report, record = base + ".onnx", base + ".json", base + ".run.json"
    cmd = ([a.tso, "optimize", path, "-o", out, "--device", "cpu", "--report", report,
            "--cost-cache", os.path.join(a.cache, COST_CACHE), "-q", "--rules"]
           + rule_files(partial) + flags + shlex.split(a.optimize_flags))
    newest = max(os.path.getmtime(path), os.path.getmtime(a.tso))
    try:
        with open(record) as f:
            rec = json.load(f)
        if (not a.reoptimize and rec["command"] == cmd
                and all(os.path.getmtime(p) > newest for p in (out, report))):
            with open(report) as f:
                return {"path": out, "report": json.load(f), "seconds": rec["seconds"]}
    except (OSError, ValueError, KeyError):
        pass
    if os.path.exists(record):
        os.remove(record)
    progress(f"{stem} b{batch}: tso optimize ({kind} rules)")
    t = time.monotonic()
    _, err = run_process(cmd, a.timeout)
    if err:
        return {"error": f"tso optimize ({kind}): {err}"}
    seconds = time.monotonic() - t
    with open(report) as f:
        rep = json.load(f)
    with open(record, "w") as f:
        json.dump({"command": cmd, "seconds": seconds}, f)
    sc = rep["speed_check"]
    progress(f"{stem} b{batch}: {kind} optimized in {seconds:.0f} s; speed check "
             f"{sc['input_ms']:.1f} -> {sc['optimized_ms']:.1f} ms, wrote the {sc['written']} graph")
    return {"path": out, "report": rep, "seconds": seconds}


def correction_ms(path, a):
    """(ms per run of the correction steps, ms of all steps) of `path`, from
    `tso run --profile`, or (None, error)."""
    out, err = run_process([a.tso, "run", path, "--device", "cpu", "--iters", "3", "--profile",
                            str(a.profile_runs), "--threads", str(a.threads)], a.timeout)
    if err:
        return None, err
    steps = [(float(ms), node) for ms, node in STEP.findall(out)]
    return (sum(ms for ms, node in steps if "/correction/" in node),
            sum(ms for ms, _ in steps)), None


def bench(stem, batch, configs, a):
    """{config: (min, median) or error}, alternating rounds."""
    runs = a.heavy_runs if batch > 1 or stem == "bert_base_seq128" else a.runs

    def timed(path, flags, n):
        saved = a.tso_flags
        a.tso_flags = " ".join(shlex.quote(x) for x in flags)
        try:
            return time_tso(path, n, 0, a)
        finally:
            a.tso_flags = saved

    timers = [(c, lambda n, path=path, flags=flags: timed(path, flags, n))
              for c, path, flags in configs]
    return cpu_bench.alternate(f"{stem} b{batch}", timers, a.rounds, 2, runs)


def fired(rep):
    """'rule x count' of the region rules the search applied, and their boxes."""
    counts, boxes, elements = {}, 0, 0
    for r in rep.get("region_rules_applied", []):
        counts[r["rule"]] = counts.get(r["rule"], 0) + 1
        boxes += r["corrected_boxes"]
        elements += r["corrected_elements"]
    text = ", ".join(f"{k} x{v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
    return text or "none", boxes, elements


def families(rep):
    """{family: (rules matched, matches, best predicted change us, applications)}
    from the report's region rules considered and applied."""
    fam = lambda rule: "_".join(rule.split("_")[1:-1]) if rule.startswith("pet_") else rule
    out = {}
    for c in rep.get("region_rules_considered", []):
        f = out.setdefault(fam(c["rule"]), [0, 0, None, 0])
        f[0] += 1
        f[1] += c["matches"]
        d = c["best_predicted_delta_us"]
        f[2] = d if f[2] is None else min(f[2], d)
    for a in rep.get("region_rules_applied", []):
        out.setdefault(fam(a["rule"]), [0, 0, None, 0])[3] += 1
    return out


def parser():
    ap = argparse.ArgumentParser(prog="pet_bench.sh", description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(MODELS), help="default " + ",".join(MODELS))
    ap.add_argument("--batches", default="1,16", help="default 1,16")
    ap.add_argument("--threads", type=int, default=cpu_bench.usable_cpus())
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    ap.add_argument("--runs", type=int, default=10, help="timed runs per process (default 10)")
    ap.add_argument("--heavy-runs", type=int, default=3,
                    help="timed runs per process at batch > 1 and for BERT (default 3)")
    ap.add_argument("--profile-runs", type=int, default=5,
                    help="runs of tso run --profile for the correction's time (default 5)")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "..", "shared", "models"))
    ap.add_argument("--tso", default=os.path.join(ROOT, "build", "tso"))
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "pet_bench"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per process")
    ap.add_argument("--optimize-flags", default="", help="extra flags for tso optimize")
    ap.add_argument("--reoptimize", action="store_true",
                    help=f"optimize again and delete the cost cache ({COST_CACHE} in --cache)")
    ap.add_argument("--out", help="also write the tables as markdown")
    return ap


def options(argv):
    """The settings of pet_bench.sh ARGV..., paths absolute (also for
    experiments/reproduce.py)."""
    a = parser().parse_args(argv)
    a.tso, a.cache = os.path.abspath(a.tso), os.path.abspath(a.cache)
    a.models_dir = os.path.abspath(a.models_dir)
    a.tso_flags = ""
    cpu_bench.keep_plan_choices_in(a.cache)
    return a


def bench_row(stem, batch, a):
    """One row of the table: the model at this batch, optimized with the
    fully equivalent rules and with the partial ones, the three files timed
    in alternating rounds, the correction's time. {"error"} when the model
    or an optimization failed."""
    path, flags = model_file(stem, batch, a)
    if path is None:
        return {"error": flags}
    full = optimize(stem, batch, path, flags, False, a)
    if "error" in full:
        return {"error": full["error"]}
    # The partial rules go on from the fully equivalent optimum: the speed
    # check of that search then keeps the full file unless the partial rules
    # beat it, as two searches from the input would not (each with its own
    # rewrites, each passing its own check against the input).
    part = optimize(stem, batch, full["path"], [], True, a)
    if "error" in part:
        return {"error": part["error"]}
    times = bench(stem, batch, [("input", path, flags), ("full", full["path"], []),
                                ("partial", part["path"], [])], a)
    corr, err = correction_ms(part["path"], a)
    row = {"times": times, "full": full, "partial": part, "correction": corr,
           "correction_error": err,
           "same_file": filecmp.cmp(full["path"], part["path"], shallow=False)}
    print_row(stem, batch, row)
    return row


def main():
    a = options(sys.argv[1:])
    if a.reoptimize and os.path.exists(os.path.join(a.cache, COST_CACHE)):
        os.remove(os.path.join(a.cache, COST_CACHE))
    setting = [
        ("date", time.strftime("%Y-%m-%d %H:%M:%S %Z")),
        ("cpu", f"{cpu_bench.cpu_model()[0]}, {a.threads} threads"),
        ("load", " ".join(f"{x:.2f}" for x in os.getloadavg())),
        ("tso", f"{shown_path(a.tso)} (source tree {cpu_bench.git_head()})"),
        ("protocol", f"per model 1 untimed warm-up process per configuration, then {a.rounds} "
                     "rounds input, full, partial; each a fresh tso run process of "
                     f"{a.runs} timed runs ({a.heavy_runs} at batch > 1 and for BERT)"),
        ("optimize", "tso optimize FILE --device cpu (costs measured on this runtime, cache "
                     f"{shown_path(os.path.join(a.cache, COST_CACHE))}); full: the input with every rule "
                     f"file but {PET_RULES}; partial: the full file with every rule file"),
        ("command", " ".join(["experiments/pet_bench.sh"] + sys.argv[1:])),
    ]
    for k, v in setting:
        print(f"{k:<9} {v}")
    rows = []
    for stem in [m.strip() for m in a.models.split(",") if m.strip()]:
        for batch in [int(b) for b in a.batches.split(",")]:
            rows.append((stem, batch, bench_row(stem, batch, a)))
            if a.out:  # after every row: a long run stopped early keeps what it measured
                with open(a.out, "w") as f:
                    f.write(markdown(setting, rows))
    md = markdown(setting, rows)
    print("\n" + md)
    if a.out:
        with open(a.out, "w") as f:
            f.write(md)


def ms(t):
    return f"{t[0]:.1f}" if isinstance(t, tuple) else "failed"


def print_row(stem, batch, r):
    t = r["times"]
    progress(f"{stem} b{batch}: input {ms(t['input'])}, full {ms(t['full'])}, "
             f"partial {ms(t['partial'])} ms (min)")


def markdown(setting, rows):
    out = ["# Partial equivalence on tso's CPU runtime", "", "```"]
    out += [f"{k:<9} {v}" for k, v in setting]
    out += ["```", ""]
    return "\n".join(out + table_lines(rows)) + "\n"


def partial_written(r):
    """What the partial optimization wrote: "optimized", or the graph it
    read: "full" where that was the full file, else "input"."""
    written = r["partial"]["report"]["speed_check"]["written"]
    read = r["partial"]["report"].get("model")
    if written == "input" and read and read == r["full"].get("path"):
        return "full"
    return written


def table_lines(rows):
    """The three tables of [(model, batch, bench_row(...))] as markdown lines."""
    out = ["Latency, minimum over the rounds (median in parentheses), ms. `full`: optimized with "
            "the fully equivalent rules; `partial`: with the partial rules too. The speedup "
            "columns divide minimums. The partial search starts from the full file, and its "
            "speed check compares with that file: `full` in the last column is that file "
            "kept. Where full and partial wrote byte-identical files, their ratio is the "
            "spread of timing one file twice, not an effect of the rules.", "",
            "| model | batch | input | full | partial | partial vs full | partial vs input "
            "| written (full / partial) |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    detail = ["", "Partial rules applied (from the search's report) and their corrections, "
              "timed with `tso run --profile` on the partial file:", "",
              "| model | batch | rules (applications) | corrected boxes | corrected elements "
              "| correction ms | of all steps ms |",
              "| --- | ---: | --- | ---: | ---: | ---: | ---: |"]
    fams = ["", "Every family the search matched, per model: the rules that matched, in how many "
            "expanded graphs, the best predicted change of the graph's cost one application "
            "offered (measured operator costs of this runtime, correction included; positive: "
            "the family never pays there), and how often the written graph applies it:", "",
            "| model | batch | family | rules | matches | best predicted change (ms) | applied |",
            "| --- | ---: | --- | ---: | ---: | ---: | ---: |"]
    for stem, batch, r in rows:
        if "error" in r:
            out.append(f"| {stem} | {batch} | failed: {r['error']} | | | | | |")
            continue
        for f, (n, matches, best, applied) in sorted(families(r["partial"]["report"]).items()):
            best_ms = "-" if best is None else f"{best / 1000:+.3f}"
            fams.append(f"| {stem} | {batch} | {f} | {n} | {matches} | {best_ms} | {applied} |")
        t = r["times"]
        cell = lambda c: (f"{t[c][0]:.1f} ({t[c][1]:.1f})" if isinstance(t[c], tuple)
                          else "failed: " + t[c].replace("|", "\\|"))
        ratio = lambda a, b: (f"{t[a][0] / t[b][0]:.2f}x"
                              if isinstance(t[a], tuple) and isinstance(t[b], tuple) else "-")
        written = (r["full"]["report"]["speed_check"]["written"] + " / "
                   + partial_written(r)
                   + (" (one file: byte-identical)" if r.get("same_file") else ""))
        out.append(f"| {stem} | {batch} | {cell('input')} | {cell('full')} | {cell('partial')} "
                   f"| {ratio('full', 'partial')} | {ratio('input', 'partial')} | {written} |")
        text, boxes, elements = fired(r["partial"]["report"])
        corr = (f"{r['correction'][0]:.2f} | {r['correction'][1]:.1f}" if r["correction"]
                else f"failed: {r['correction_error']} |")
        detail.append(f"| {stem} | {batch} | {text} | {boxes} | {elements} | {corr} |")
    return out + detail + fams


if __name__ == "__main__":
    main()
