"""experiments/optimize_models.py without running tso: the baseline's rule
files taken from git, the tables of rewrites and latencies with their failed
cells, and the reuse of an optimization only under the same command."""
import json
import os
import subprocess
import types

import pytest

import optimize_models


def report(ops, written="optimized", **kinds):
    k = {key: kinds.get(key, 0) for key, _ in optimize_models.KINDS}
    return {"operators": {"before": 10, "after": ops}, "classic_rewrites": k,
            "speed_check": {"written": written}}


def test_the_baseline_rule_files_come_from_git(tmp_path):
    has = subprocess.run(["git", "-C", optimize_models.ROOT, "cat-file", "-e",
                          f"{optimize_models.BASELINE}^{{commit}}"], capture_output=True)
    if has.returncode != 0:
        pytest.skip(f"no git history with {optimize_models.BASELINE} in this checkout")
    paths = optimize_models.baseline_rules(optimize_models.BASELINE, str(tmp_path))
    names = sorted(os.path.basename(p) for p in paths)
    assert "taso_n3.rules" in names and "lifted_n3.rules" not in names  # lifted came later
    committed = subprocess.run(
        ["git", "-C", optimize_models.ROOT, "show",
         f"{optimize_models.BASELINE}:substitutions/taso_n3.rules"],
        capture_output=True, text=True, check=True).stdout
    with open(tmp_path / "taso_n3.rules") as f:
        assert f.read() == committed


def test_rewrite_rows_give_both_sides_and_name_a_failure():
    rows = [("a", 10, {"before": {"report": report(9, fuse_activation=1)},
                       "after": {"report": report(7, "input", merge_convolutions=2)}}),
            ("b", 12, {"before": {"report": report(12)},
                       "after": {"error": "tso optimize (after) exit 3: boom"}})]
    text = optimize_models.rewrite_lines(rows, md=False)
    assert text[1].split() == ["a", "10", "9", "1", "0", "0", "0", "0", "0", "optimized",
                               "7", "0", "2", "0", "0", "0", "0", "input"]
    assert text[2].endswith("tso optimize (after) exit 3: boom")
    md = optimize_models.rewrite_lines(rows, md=True)
    header, rule = md[0].split("|")[1:-1], md[1].split("|")[1:-1]
    assert len(header) == len(rule) == 2 + 2 * (len(optimize_models.KINDS) + 2)
    assert md[3].startswith("| b | 12 | 12 |") and "| - |" in md[3]


def test_latency_rows_give_speedups_against_the_input():
    rows = [("a", {"input": (10.0, 11.0), "before": (10.0, 11.0), "after": (8.0, 10.0)}),
            ("b", {"input": (5.0, 5.0), "before": "(round 2) exit 2: bad", "after": (5.0, 5.0)})]
    text = optimize_models.timing_lines(rows, md=False)
    assert text[1].split()[-3:] == ["1.000", "1.250", "1.100"]
    assert text[2].split()[3:7] == ["-", "-", "5.00", "5.00"]
    assert text[2].endswith("before: (round 2) exit 2: bad")
    assert "| - | - |" in optimize_models.timing_lines(rows, md=True)[3]


def test_an_optimization_is_reused_only_under_the_same_command(tmp_path, monkeypatch):
    model, tso = tmp_path / "m.onnx", tmp_path / "tso"
    model.write_bytes(b"model")
    tso.write_bytes(b"binary")
    a = types.SimpleNamespace(tso=str(tso), cache=str(tmp_path), baseline="REV", timeout=5)
    ran = []

    def run_process(cmd, timeout):
        ran.append(cmd)
        out, rep = cmd[cmd.index("-o") + 1], cmd[cmd.index("--report") + 1]
        with open(out, "w") as f:
            f.write("optimized")
        with open(rep, "w") as f:
            json.dump(report(8), f)
        return "", None

    monkeypatch.setattr(optimize_models.cpu_bench, "run_process", run_process)
    first = optimize_models.optimize("m", str(model), "before", ["/tmp/x/a.rules"], a)
    again = optimize_models.optimize("m", str(model), "before", ["/tmp/y/a.rules"], a)
    assert len(ran) == 1 and again["path"] == first["path"]  # scratch copies differ: same key
    optimize_models.optimize("m", str(model), "after", [], a)
    a.baseline = "OTHER"
    optimize_models.optimize("m", str(model), "before", ["/tmp/x/a.rules"], a)
    assert len(ran) == 3
