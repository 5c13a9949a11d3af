#!/usr/bin/env python3
"""PyTorch's batch-1 latency of one model of TASO's table on the GPU, in one
of the three ways a PyTorch user runs it: the peers tso's CUDA runtime is
measured against (experiments/gpu_bench.py runs one process per model and
mode, alternating them with tso's).

  eager     the module in eval mode, cudnn.benchmark and TF32 on, fp32
  graph     the same, captured once in a CUDA graph and replayed
  compile   torch.compile(mode="reduce-overhead"): Inductor's fused kernels
            replayed from CUDA graphs, PyTorch's fastest batch-1 setting

Prints `torch min_ms=X median_ms=Y runs=N` (CUDA events around each run,
after the warm-up runs). The ONNX files cannot be loaded into PyTorch, so
the models come from the constructors they were exported from (torchvision,
timm, transformers; ../shared/models/README.md), and NasRNN from the cell of
`tso zoo nasrnn` (frontend/nasrnn.h), written again below. Weights are
random: latency does not depend on their values.
"""
import argparse
import statistics
import sys

import torch

MODELS = ["squeezenet1_1", "resnet50", "resnext50_32x4d", "inception_v3", "nasrnn",
          "bert_base_seq128", "nasnetalarge"]
MODES = ["eager", "graph", "compile"]


class NasRnn(torch.nn.Module):
    """TASO's NasRNN as `tso zoo nasrnn` builds it: `steps` recurrent steps of
    the searched cell, each with eight pairs of products x·Wx + h·Wh (fresh
    weights per step), mixed by relu, sigmoid and tanh; the initial state is
    a weight, the output the last state."""

    def __init__(self, steps=5, hidden=512):
        super().__init__()
        self.steps = steps
        self.h0 = torch.nn.Parameter(torch.randn(1, hidden))
        self.wx = torch.nn.Parameter(torch.randn(steps, 8, hidden, hidden) / hidden ** 0.5)
        self.wh = torch.nn.Parameter(torch.randn(steps, 8, hidden, hidden) / hidden ** 0.5)

    def forward(self, xs):
        sig, th, relu = torch.sigmoid, torch.tanh, torch.relu
        h = self.h0
        for s in range(self.steps):
            x = xs[s]
            t = [x @ self.wx[s, k] + h @ self.wh[s, k] for k in range(8)]
            m0 = relu(t[0]) + sig(t[3])
            m1 = sig(t[1]) + th(t[2])
            m2 = sig(t[4]) * th(t[5])
            m3 = sig(t[6]) * relu(t[7])
            m4 = sig(m1) + th(m2)
            m5 = th(m0) * th(m3)
            m6 = th(m4) * th(m5)
            h = th(m6)
        return h


def build(name):
    """(module in eval mode on the GPU, its input, forward(module, input))."""
    if name == "bert_base_seq128":
        import transformers
        model = transformers.BertModel(transformers.BertConfig())
        x = torch.randn(1, 128, 768)
        forward = lambda m, t: m(inputs_embeds=t).last_hidden_state
    elif name == "nasnetalarge":
        import timm
        model = timm.create_model("nasnetalarge", pretrained=False)
        x = torch.randn(1, 3, 331, 331)
        forward = lambda m, t: m(t)
    elif name == "nasrnn":
        model = NasRnn()
        x = torch.randn(model.steps, 1, 512)
        forward = lambda m, t: m(t)
    else:
        import torchvision
        kwargs = {"aux_logits": False, "init_weights": True} if name == "inception_v3" else {}
        model = getattr(torchvision.models, name)(weights=None, **kwargs)
        size = 299 if name == "inception_v3" else 224
        x = torch.randn(1, 3, size, size)
        forward = lambda m, t: m(t)
    return model.eval().cuda(), x.cuda(), forward


def run_fn(name, mode):
    """The call one timed run makes, prepared (captured or compiled) for `mode`."""
    model, x, forward = build(name)
    if mode == "eager":
        return lambda: forward(model, x)
    if mode == "compile":
        compiled = torch.compile(model, mode="reduce-overhead")
        return lambda: forward(compiled, x)
    side = torch.cuda.Stream()  # graph: warm up off the capture (cudnn.benchmark picks)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            forward(model, x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        forward(model, x)
    return graph.replay


def time_runs(fn, runs, warmup):
    """Milliseconds of each of `runs` calls of fn, CUDA events around each,
    after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(runs):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return times


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", choices=MODELS)
    p.add_argument("--mode", choices=MODES, default="eager")
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    if a.runs < 1 or a.warmup < 0:
        p.error("--runs >= 1, --warmup >= 0")
    if not torch.cuda.is_available():
        sys.exit("torch_bench.py: no CUDA device visible to PyTorch")
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.manual_seed(a.seed)
    with torch.inference_mode():
        times = time_runs(run_fn(a.model, a.mode), a.runs, a.warmup)
    print(f"torch min_ms={min(times):.3f} median_ms={statistics.median(times):.3f} runs={a.runs}")


if __name__ == "__main__":
    main()
