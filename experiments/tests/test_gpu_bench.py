"""experiments/gpu_bench.py without a GPU: a fake tso binary and a fake
PyTorch stand in for the processes it starts, so what is tested is the
protocol (which processes, in which order, what is parsed, how a failed
configuration is reported) and the tables and plot reproduce.py writes from
its rows."""
import json
import os
import sys
import types

import gpu_bench
import repro_plots
import repro_report
import reproduce

FAKE_TSO = """#!{python}
import json, shutil, sys
args = sys.argv[1:]
with open({log!r}, "a") as f:
    f.write(" ".join(args) + "\\n")
if args[0] == "zoo":
    open(args[args.index("-o") + 1], "w").write("model")
elif args[0] == "optimize":
    shutil.copy(args[1], args[args.index("-o") + 1])
    report = {{"predicted_cost_us": {{"before": 2000.0, "after": 1600.0}},
              "speed_check": {{"ran": True, "note": "", "input_ms": 2.0, "optimized_ms": 1.7,
                              "written": "optimized"}},
              "cost_model": "measured on demand (fake)",
              "search": {{"seconds": 1.0, "measuring_seconds": 0.5, "expansions": 3,
                         "stop_reason": "stalled"}}}}
    json.dump(report, open(args[args.index("--report") + 1], "w"))
elif args[0] == "run":
    ms = 1.5 if ".opt." in args[1] else 2.0
    print(f"latency      median {{ms + 0.1:.3f}} ms (min {{ms:.3f}}, max 9.000) over 200 replays")
"""

FAKE_TORCH = """#!{python}
import sys
mode = sys.argv[sys.argv.index("--mode") + 1]
if mode == "compile":
    sys.exit("torch._dynamo: something unsupported")
ms = {{"eager": 4.0, "graph": 1.8}}[mode]
print(f"torch min_ms={{ms:.3f}} median_ms={{ms + 0.2:.3f}} runs=5")
"""


def fake(tmp_path, name, text, **kw):
    path = tmp_path / name
    path.write_text(text.format(python=sys.executable, **kw))
    path.chmod(0o755)
    return str(path)


def options(tmp_path):
    log = tmp_path / "tso.log"
    tso = fake(tmp_path, "tso", FAKE_TSO, log=str(log))
    torch = fake(tmp_path, "torch_python", FAKE_TORCH)
    a = gpu_bench.options(["--models", "nasrnn", "--tso", tso, "--python", torch, "--rounds", "2",
                           "--runs", "5", "--cache", str(tmp_path / "work"), "--models-dir",
                           str(tmp_path)])
    return a, log


def test_a_model_is_optimized_for_cuda_and_timed_beside_pytorch(tmp_path):
    a, log = options(tmp_path)
    res = gpu_bench.bench_row("nasrnn", a)
    t = res["times"]
    assert t["tso"] == (2.0, 2.1) and t["tso_opt"] == (1.5, 1.6)
    assert t["torch_eager"] == (4.0, 4.2) and t["torch_graph"] == (1.8, 2.0)
    assert "something unsupported" in t["torch_compile"]  # failed, reported, not timed again
    calls = log.read_text().splitlines()
    optimize = next(c for c in calls if c.startswith("optimize"))
    assert "--device cuda" in optimize and "cuda_costs.json" in optimize
    runs = [c for c in calls if c.startswith("run")]
    # one warm-up process each, then two rounds alternating input and output
    assert len(runs) == 6 and all("--device cuda" in c for c in runs)
    assert [".opt." in c for c in runs[2:]] == [False, True, False, True]
    assert res["optimize"]["path"].endswith("nasrnn.b1.cuda.opt.onnx")


def test_text_table_gives_speedup_and_the_fastest_pytorch(tmp_path):
    a, _ = options(tmp_path)
    lines = gpu_bench.text_lines([("nasrnn", gpu_bench.bench_row("nasrnn", a)),
                                  ("resnet50", {"error": "no resnet50.graph.onnx"})])
    row = next(l for l in lines if l.startswith("nasrnn")).split()
    assert row[1:4] == ["2.000", "1.500", "1.33x"]
    assert row[-1] == "0.83"  # 1.5 ms against PyTorch's CUDA graph, 1.8 ms
    assert any(l.startswith("resnet50  failed: no resnet50") for l in lines)
    assert any(l.startswith("nasrnn, torch_compile failed") for l in lines)


def test_results_and_plot_have_the_gpu_table(tmp_path):
    a, _ = options(tmp_path)
    rows = [types.SimpleNamespace(id="gpu/nasrnn"), types.SimpleNamespace(id="gpu/resnet50")]
    records = {"gpu/nasrnn": {"load_at_start": [0, 0, 0],
                              "result": json.loads(json.dumps(gpu_bench.bench_row("nasrnn", a)))}}
    text = repro_report.results_md([("gpu", "H100")], rows, records, [], True, "GPU 0: H100", False)
    line = next(l for l in text.splitlines() if l.startswith("| nasrnn |"))
    cells = [c.strip() for c in line.split("|")[1:-1]]
    assert cells[1:5] == ["2.00 (2.10)", "1.50 (1.60)", "1.25x", "1.33x"]
    assert cells[7] == "failed" and cells[8] == "0.83"
    assert cells[-2:] == ["1.454x", "1.689x"]  # published, Tensat's table
    assert "| resnet50 | not yet |" in text
    assert "the GPU part, 1 of 2 models" in text
    plots = repro_plots.write_all(str(tmp_path), records)
    assert [os.path.basename(p) for p, _ in plots] == ["gpu_speedup.png"]
    assert os.path.getsize(tmp_path / "gpu_speedup.png") > 0


def test_the_plan_has_a_gpu_row_per_model_only_with_a_gpu(tmp_path):
    a = types.SimpleNamespace(rounds=5, threads=2, seed=0)
    tso = tmp_path / "tso"
    tso.write_text("")
    p = reproduce.PROFILES["quick"]
    ctx = {"tso": str(tso), "work": str(tmp_path)}
    ids = lambda gpu: [r.id for r in reproduce.plan(a, p, ctx, gpu)]
    assert not [i for i in ids(False) if i.startswith("gpu/")]
    assert [i for i in ids(True) if i.startswith("gpu/")] == [f"gpu/{m}" for m in p["models"]]


def test_bad_options_are_named(capsys):
    for argv, message in ((["--models", "vgg16"], "unknown model(s) vgg16"),
                          (["--warmup", "1"], "--warmup >= 3")):
        try:
            gpu_bench.options(argv)
        except SystemExit as e:
            assert e.code == 2
        else:
            raise AssertionError(f"{argv} accepted")
        assert message in capsys.readouterr().err
