"""The rule pipeline's figures for experiments/reproduce.py: `tso generate`
at N operators (the count after every pruning stage, rules written, wall
time, peak memory) and `tso verify` of what it wrote (verified, refuted,
unknown, wall time). Each command runs alone in its own process; its wall
time and peak resident memory are measured here (os.wait4), beside the
figures the command prints itself.
"""
import csv
import io
import os
import re
import subprocess
import tempfile
import threading
import time

# `tso generate`'s count lines (cli/generate.cc, print_counts), in order.
STAGES = [
    ("not first-use order", "not_first_use"),
    ("graphs enumerated", "graphs"),
    ("fingerprints", "fingerprints"),
    ("candidate pairs", "candidates"),
    ("common subgraph", "common"),
    ("values agree", "values"),
    ("renaming", "renaming"),
    ("bindable", "bindable"),
    ("independent parts", "independent"),
    ("double re-test", "float_ok"),
    ("implied", "implied"),
    ("rules written", "written"),
]
STEP_SECONDS = re.compile(r"^seconds: (.*)$", re.M)
VERIFY_COUNT = re.compile(r"^(verified|refuted|unknown)\s+(\d+)\s", re.M)
VERIFY_WALL = re.compile(r"([0-9.]+) s wall with (\d+) jobs")
VERIFY_TIMEOUT_MS = 10000  # Z3's time limit per rule (tso verify's default)


def run_measured(cmd, timeout):
    """{"rc", "stdout", "stderr", "wall_s", "peak_rss_mib", "timed_out"} of
    `cmd` run alone; peak_rss_mib from the child's own rusage. An interrupt
    ends the child and goes on up."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            p.kill()

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(p.pid, 0)
        except BaseException:
            p.kill()
            os.wait4(p.pid, 0)
            raise
        finally:
            timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        wall = time.monotonic() - t
        out.seek(0)
        err.seek(0)
        return {"rc": p.returncode, "stdout": out.read(), "stderr": err.read(), "wall_s": wall,
                "peak_rss_mib": usage.ru_maxrss / 1024, "timed_out": timed_out.is_set()}


def failure(r, what):
    lines = [l for l in (r["stderr"] or r["stdout"]).splitlines() if l.strip()]
    how = "timed out" if r["timed_out"] else f"exit {r['rc']}"
    return f"{what} {how}: {lines[-1][:160] if lines else '(no output)'}"


def parse_generate(stdout):
    """{key: count} of the stages, and {step: seconds} of the steps."""
    counts = {}
    for label, key in STAGES:
        m = re.search(rf"^{re.escape(label)}\s+(\d+)", stdout, re.M)
        if m:
            counts[key] = int(m.group(1))
    steps = {}
    m = STEP_SECONDS.search(stdout)
    if m:
        for part in m.group(1).split(","):
            name, _, secs = part.strip().rpartition(" ")
            try:
                steps[name] = float(secs)
            except ValueError:
                pass
    return counts, steps


def generate_row(tso, max_ops, ops, out, timeout):
    """`tso generate --max-ops N --ops OPS -o OUT`: its counts and steps."""
    cmd = [tso, "generate", "--max-ops", str(max_ops), "--ops", ops, "-o", out]
    r = run_measured(cmd, timeout)
    row = {"command": f"tso generate --max-ops {max_ops} --ops {os.path.basename(ops)}",
           "wall_s": r["wall_s"],
           "peak_rss_mib": r["peak_rss_mib"]}
    if r["rc"] != 0:
        row["error"] = failure(r, "tso generate")
        return row
    row["counts"], row["step_seconds"] = parse_generate(r["stdout"])
    return row


def timed_out_rules(rules_text):
    """The names of the rules `tso verify` left unknown at its time limit."""
    names, rule = set(), None
    for line in rules_text.splitlines():
        if line.startswith("rule "):
            rule = line.split()[1]
        elif line.startswith("  status unknown") and "timeout after" in line:
            names.add(rule)
    return names


def timeout_share(csv_text, timed_out):
    """(how many rules reached the time limit, their share of the summed
    proof time) from `tso verify --timings`'s CSV and those rules' names."""
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    total = sum(float(r["ms"]) for r in rows)
    hit = sum(float(r["ms"]) for r in rows if r["rule"] in timed_out)
    return len(timed_out), (hit / total if total > 0 else 0.0)


def verify_row(tso, rules, out, timeout, jobs=2):
    """`tso verify RULES -o OUT --jobs J`: the rules' statuses, the time, and
    how much of it went to rules that reached the time limit."""
    timings = out + ".timings.csv"
    cmd = [tso, "verify", rules, "-o", out, "--jobs", str(jobs), "--timeout-ms",
           str(VERIFY_TIMEOUT_MS), "--timings", timings]
    r = run_measured(cmd, timeout)
    row = {"command": f"tso verify {os.path.basename(rules)} --jobs {jobs}", "wall_s": r["wall_s"],
           "peak_rss_mib": r["peak_rss_mib"], "jobs": jobs}
    if r["rc"] != 0:
        row["error"] = failure(r, "tso verify")
        return row
    row["counts"] = {k: int(v) for k, v in VERIFY_COUNT.findall(r["stdout"])}
    m = VERIFY_WALL.search(r["stdout"])
    if m:
        row["verify_wall_s"] = float(m.group(1))
    with open(out) as f, open(timings) as t:
        row["timeouts"], row["timeout_share"] = timeout_share(t.read(), timed_out_rules(f.read()))
    return row
