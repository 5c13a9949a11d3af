"""experiments/reproduce.py without measuring anything: rows kept, skipped,
measured again and interrupted; the generator's and verifier's output
parsed; results.md keeps published figures apart and says "not yet" for
rows not measured."""
import json
import os
import types

import pytest

import pipeline_bench
import repro_report
import reproduce


def rows_of(calls, settings=None, results=None):
    """Three rows that record their runs in `calls`."""
    def run(name):
        def go():
            calls.append(name)
            r = (results or {}).get(name, {"value": name})
            if isinstance(r, BaseException):
                raise r
            return r
        return go
    return [reproduce.Row(f"t/{n}", 1.0, run(n), dict(settings or {"rounds": 5}))
            for n in ("a", "b", "c")]


def test_finished_rows_are_kept_and_skipped(tmp_path):
    calls = []
    records, interrupted = reproduce.run_rows(rows_of(calls), str(tmp_path))
    assert calls == ["a", "b", "c"] and not interrupted
    assert sorted(os.listdir(tmp_path / "rows")) == ["t__a.json", "t__b.json", "t__c.json"]
    assert json.loads((tmp_path / "rows" / "t__b.json").read_text())["result"] == {"value": "b"}
    calls.clear()
    records, _ = reproduce.run_rows(rows_of(calls), str(tmp_path))
    assert calls == []
    assert records["t/c"]["result"] == {"value": "c"}


def test_an_interrupt_keeps_the_rows_before_it(tmp_path):
    calls = []
    records, interrupted = reproduce.run_rows(
        rows_of(calls, results={"b": KeyboardInterrupt()}), str(tmp_path))
    assert interrupted and calls == ["a", "b"]
    assert list(records) == ["t/a"]
    calls.clear()
    records, interrupted = reproduce.run_rows(rows_of(calls), str(tmp_path))
    assert calls == ["b", "c"] and not interrupted and len(records) == 3


def test_failed_rows_other_settings_and_lost_outputs_are_measured_again(tmp_path):
    calls = []
    reproduce.run_rows(rows_of(calls, results={"a": {"error": "boom"}}), str(tmp_path))
    calls.clear()
    reproduce.run_rows(rows_of(calls), str(tmp_path))
    assert calls == ["a"]  # failed before
    calls.clear()
    reproduce.run_rows(rows_of(calls, settings={"rounds": 3}), str(tmp_path))
    assert calls == ["a", "b", "c"]  # measured with 5 rounds before
    calls.clear()
    rows = rows_of(calls, settings={"rounds": 3})
    rows[1].outputs = [str(tmp_path / "gone.rules")]
    reproduce.run_rows(rows, str(tmp_path))
    assert calls == ["b"]


def test_a_row_that_raises_is_not_kept_and_the_others_run(tmp_path):
    calls = []
    records, interrupted = reproduce.run_rows(
        rows_of(calls, results={"a": ValueError("a bug")}), str(tmp_path))
    assert calls == ["a", "b", "c"] and not interrupted and "t/a" not in records


def test_select_by_patterns():
    rows = [types.SimpleNamespace(id=i) for i in
            ("taso/resnet50", "taso/squeezenet1_1", "pet/csrnet.b16", "pipeline/generate.n3")]
    ids = lambda rs: [r.id for r in rs]
    assert ids(reproduce.select(rows, ["taso/s*", "pipeline/*.n3"], [])) == [
        "taso/squeezenet1_1", "pipeline/generate.n3"]
    assert ids(reproduce.select(rows, [], ["pet/*.b16"])) == [
        "taso/resnet50", "taso/squeezenet1_1", "pipeline/generate.n3"]


GENERATE_OUT = """max-ops 3, seed 1, ops taso
not first-use order 3291919
graphs enumerated   856187 (0 ops: 1, 1 ops: 84, 2 ops: 8327, 3 ops: 847775)
fingerprints        807808
candidate pairs     48379
common subgraph     7506
values agree        7506
renaming            3597
bindable            3597
independent parts   3597
double re-test      3597
implied             620
rules written       620
seconds: enumerate 2.1, pair 0.0, implied 0.4
time 4.0 s, peak RSS 300 MiB, 2 threads, load average 1.60 at start, wrote x.rules
"""


def test_generate_output_is_parsed():
    counts, steps = pipeline_bench.parse_generate(GENERATE_OUT)
    assert counts["graphs"] == 856187 and counts["candidates"] == 48379
    assert counts["written"] == 620 and counts["not_first_use"] == 3291919
    assert len(counts) == len(pipeline_bench.STAGES)
    assert steps == {"enumerate": 2.1, "pair": 0.0, "implied": 0.4}


VERIFIED_OUT = """# tso rules v1
rule a {
  origin generated version=0.2 ops=taso seed=1
  status verified specs=abc
}
rule b_lifted {
  origin generated version=0.2 ops=taso seed=1
  status unknown reason="at rank 3: timeout after 10000 ms"
}
rule c {
  origin generated version=0.2 ops=taso seed=1
  status unknown reason="not implied by the axioms (instantiation saturated)"
}
"""


def test_the_rules_at_the_time_limit_and_their_share_of_proof_time():
    timed_out = pipeline_bench.timed_out_rules(VERIFIED_OUT)
    assert timed_out == {"b_lifted"}
    n, share = pipeline_bench.timeout_share(
        "rule,status,ms\na,verified,500.0\nb_lifted,unknown,10020.0\nc,unknown,9480.0\n",
        timed_out)
    assert n == 1 and share == pytest.approx(10020 / 20000)


def test_a_child_is_measured_and_ended_at_its_time_limit():
    r = pipeline_bench.run_measured(["python3", "-c", "x = bytearray(64 << 20); print('ok')"], 60)
    assert r["rc"] == 0 and r["stdout"] == "ok\n" and r["peak_rss_mib"] >= 64
    r = pipeline_bench.run_measured(["sleep", "30"], 0.5)
    assert r["timed_out"] and r["rc"] != 0 and r["wall_s"] < 10


def taso_record(stem, ort, tso):
    report = {"predicted_cost_us": {"before": 1000 * tso * 1.1, "after": 1000 * tso},
              "speed_check": {"ran": True, "note": "", "input_ms": tso, "optimized_ms": tso,
                              "written": "optimized"},
              "cost_model": "measured on demand (test)",
              "search": {"seconds": 2.0, "measuring_seconds": 1.5, "expansions": 30,
                         "stop_reason": "stalled",
                         "best_over_time": [
                             {"seconds": 0, "measuring_seconds": 0, "expansions": 0,
                              "best_cost_us": 1000 * tso * 1.1},
                             {"seconds": 1.0, "measuring_seconds": 0.8, "expansions": 7,
                              "best_cost_us": 1000 * tso}]}}
    times = {"ort": [ort, ort], "tso": [tso * 1.1, tso * 1.1], "ort_opt": [ort, ort],
             "tso_opt": [tso, tso]}
    return {"load_at_start": [0.1, 0, 0],
            "result": {"file": stem, "times": times, "optimize": {"report": report}}}


def test_results_keep_published_figures_apart_and_say_not_yet():
    rows = [types.SimpleNamespace(id=i) for i in
            ("taso/squeezenet1_1", "taso/resnet50", "pet/csrnet.b1", "pipeline/generate.n3")]
    records = {"taso/squeezenet1_1": taso_record("squeezenet1_1", 4.0, 3.0)}
    text = repro_report.results_md([("cpu", "test")], rows, records, [], False, "no GPU here",
                                   interrupted=True)
    line = next(l for l in text.splitlines() if l.startswith("| squeezenet1_1 | 4.00"))
    cells = [c.strip() for c in line.split("|")[1:-1]]
    assert cells[5] == "1.10x" and cells[6] == "1.10x"  # predicted, measured on tso
    assert cells[-2:] == ["1.067x", "1.245x"]  # Tensat's table: TASO 6.7%, Tensat 24.5%
    assert "| resnet50 | not yet |" in text
    assert "not yet: pet/csrnet.b1" in text
    assert "published, GPU: TASO" in text and "mwillsey.com/papers/tensat" in text
    assert "the GPU part skipped: no GPU here" in text
    assert "interrupted" in text
    search = next(l for l in text.splitlines() if l.startswith("| squeezenet1_1 | 0.50"))
    assert "| 1 | 0.20 | 16.4 | 0.3 |" in search  # one improvement, 1.0 - 0.8 s searching


def test_a_written_input_file_is_marked_and_left_out_of_the_second_geomean():
    rows = [types.SimpleNamespace(id=i) for i in ("taso/squeezenet1_1", "taso/resnet50")]
    kept = taso_record("resnet50", 30.0, 27.0)
    kept["result"]["optimize"]["report"]["speed_check"]["written"] = "input"
    kept["result"]["same_file"] = True
    records = {"taso/squeezenet1_1": taso_record("squeezenet1_1", 4.0, 3.0), "taso/resnet50": kept}
    text = repro_report.results_md([("cpu", "test")], rows, records, [], False, "no GPU here",
                                   interrupted=False)
    assert "| input (the input file) |" in text
    assert "1 of the 2 files tso optimize wrote hold the input graph" in text
    assert "over the 1 other models the geometric mean is 1.100x" in text


def test_the_verification_table_gives_the_time_limits_share():
    rows = [types.SimpleNamespace(id="pipeline/verify.n4")]
    records = {"pipeline/verify.n4": {"load_at_start": [0.1, 0, 0], "result": {
        "counts": {"verified": 10, "refuted": 1, "unknown": 3}, "wall_s": 42.0,
        "timeouts": 2, "timeout_share": 0.68}}}
    text = repro_report.results_md([("cpu", "test")], rows, records, [], False, "no GPU here",
                                   interrupted=False)
    assert "| 4 | 14 | 10 | 1 | 3 | 2 | 68% | 42.0 s |" in text


@pytest.mark.parametrize("stem", ["resnet50", "no_such_model"])
def test_models_without_published_figures_get_none(stem):
    import references
    assert references.tensat(stem) is None


def test_rows_are_disturbed_by_other_processes_not_by_the_run_itself():
    import repro_report
    records = {"a": {"load_at_start": [1.9, 0, 0], "busy_at_start": 0.02},
               "b": {"load_at_start": [0.1, 0, 0], "busy_at_start": 0.6},
               "c": {"load_at_start": [1.2, 0, 0]},
               "d": {"load_at_start": [0.2, 0, 0]}}
    text = "\n".join(repro_report.disturbed_rows(records, ["a", "b", "c", "d"]))
    assert "b (60%)" in text and "c (1.20)" in text
    assert "a (" not in text and "d (" not in text


def test_cpu_busy_is_a_share():
    busy = reproduce.cpu_busy(0.2)
    assert busy is None or 0.0 <= busy <= 1.0
