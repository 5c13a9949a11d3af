"""cpu_bench.alternate, the timing protocol every benchmark script shares;
the profile of where tso's runtime spends a run, and its table."""
import os
import types

import pytest

import cpu_bench
import cpu_bench_optimized


def test_alternate_takes_min_and_median_and_drops_a_failed_configuration():
    calls = []

    def timer(name, results):
        def time(n):
            calls.append((name, n))
            return results.pop(0)
        return time

    timers = [("a", timer("a", [(None, None), ((3.0, 4.0), None), ((2.0, 6.0), None),
                                ((5.0, 5.0), None)])),
              ("b", timer("b", [(None, None), (None, "exit 2: bad")]))]
    res = cpu_bench.alternate("m", timers, 3, 2, 7)
    assert res == {"a": (2.0, 5.0), "b": "(round 1) exit 2: bad"}
    # one warm-up process of 2 runs each, then rounds of 7; b is not timed again
    assert calls == [("a", 2), ("b", 2), ("a", 7), ("b", 7), ("a", 7), ("a", 7)]


def test_alternate_gives_up_when_every_configuration_failed():
    res = cpu_bench.alternate("m", [("a", lambda n: (None, "no binary"))], 5, 2, 7)
    assert res == {"a": "no binary"}


def test_plan_choices_older_than_the_binary_are_stale(tmp_path):
    (tmp_path / "tso").mkdir()
    old, new = tmp_path / "tso" / "plans-a.json", tmp_path / "tso" / "plans-b.json"
    binary = tmp_path / "tso-binary"
    for path, mtime in ((old, 100), (binary, 200), (new, 300)):
        path.write_text("{}")
        os.utime(path, (mtime, mtime))
    assert cpu_bench.stale_plan_choices(str(tmp_path), str(binary)) == [str(old)]
    assert cpu_bench.stale_plan_choices(str(tmp_path), str(tmp_path / "no-binary")) == []


def test_tso_processes_keep_their_plan_choices_in_the_cache_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    cpu_bench.keep_plan_choices_in(str(tmp_path))
    assert os.environ["XDG_CACHE_HOME"] == str(tmp_path)


def test_profile_reads_the_products_and_other_steps_of_tso_run(tmp_path):
    fake = tmp_path / "tso"
    fake.write_text("#!/bin/sh\n"
                    "echo 'latency      median 3.000 ms (min 2.900, max 3.100) over 1 runs'\n"
                    "echo 'products     2.547 ms per run (89.7%), 0.703 GFLOP at 276 GFLOP/s: "
                    "26 steps computing conv2d, matmul or gemm'\n"
                    "echo 'other steps  0.294 ms per run (10.3%): 13 steps'\n")
    fake.chmod(0o755)
    a = types.SimpleNamespace(tso=str(fake), threads=2, tso_flags="", timeout=10)
    want = {"product_ms": 2.547, "product_share": 0.897, "gflop": 0.703, "gflops": 276.0,
            "products": 26, "other_ms": 0.294, "other_share": 0.103, "others": 13}
    assert cpu_bench.profile_tso("m.onnx", a) == pytest.approx(want)
    fake.write_text("#!/bin/sh\necho 'latency      median 3.000 ms'\n")
    assert cpu_bench.profile_tso("m.onnx", a).startswith("no 'products' and 'other steps' lines")


def test_the_profile_of_least_total_time_is_kept(tmp_path, monkeypatch):
    totals = iter([(5.0, 1.0), (4.0, 0.9), (4.5, 0.2)])

    def once(path, a):
        p, o = next(totals)
        return {"product_ms": p, "other_ms": o}
    monkeypatch.setattr(cpu_bench, "profile_once", once)
    fake = tmp_path / "tso"
    fake.write_text("")
    a = types.SimpleNamespace(tso=str(fake))
    assert cpu_bench.profile_tso("m.onnx", a) == {"product_ms": 4.5, "other_ms": 0.2}
    monkeypatch.setattr(cpu_bench, "profile_once", lambda path, a: "exit 1: bad file")
    assert cpu_bench.profile_tso("m.onnx", a) == "exit 1: bad file"


def test_the_bound_is_the_run_over_its_products():
    prof = {"product_ms": 8.0, "product_share": 0.8, "gflop": 1.6, "gflops": 200.0,
            "products": 3, "other_ms": 2.0, "other_share": 0.2, "others": 4}
    results = [("a", {"profile": prof}, {}), ("b", {"profile": "exit 1: no file"}, {})]
    rows, notes, bounds = cpu_bench_optimized.time_rows(results)
    assert rows[0] == ["a", "8.00", "80.0%", "1.60", "200", "2.00", "20.0%", "1.250"]
    assert rows[1] == ["b"] + [""] * 7 and notes == ["", "exit 1: no file"]
    assert bounds == [1.25]
    assert cpu_bench_optimized.time_summary(bounds)[0].startswith(
        "bound: geomean 1.250 over 1 models, against the speedup target's 1.05")


def test_a_file_written_as_the_input_is_not_called_slower_for_noise():
    report = {"speed_check": {"written": "input", "ran": True}}
    timings = {"ort": (37.64, 38.25), "ort_opt": (37.85, 38.30),
               "tso": (31.34, 32.33), "tso_opt": (31.44, 32.41)}
    same = [("resnet50", timings, {"report": report, "same_bytes": True})]
    lines = cpu_bench_optimized.gain_summary(same)
    ort = next(l for l in lines if l.startswith("ORT"))
    assert "every model <= 1.00: pass (slower on tso's output: none)" in ort
    assert "the same bytes as the input, so noise, not slower: resnet50" in ort
    assert cpu_bench_optimized.written_cell(same[0][2]) == "input (the same file)"
    other = [("resnet50", timings, {"report": report, "same_bytes": False})]
    ort = next(l for l in cpu_bench_optimized.gain_summary(other) if l.startswith("ORT"))
    assert "FAIL (slower on tso's output: resnet50)" in ort
