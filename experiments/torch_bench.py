#!/usr/bin/env python3
"""PyTorch's batch-1 latency on the models of ../shared/models, the peer tso's
CUDA runtime is measured against: eager, and eager captured in a CUDA graph,
with cudnn.benchmark and TF32 on, fp32 weights (random, eval mode).

Prints one line per model: `MODEL eager_ms graph_ms` (medians over --iters
timed runs, CUDA events, after warm-up). The ONNX files cannot be loaded into
PyTorch, so the models come from the constructors they were exported from
(torchvision, timm, transformers; see ../shared/models/README.md).
"""
import argparse
import statistics
import sys

import torch

MODELS = ["resnet50", "resnext50_32x4d", "inception_v3", "squeezenet1_1", "bert_base_seq128",
          "nasnetalarge"]


def build(name):
    """The model in eval mode on the GPU and its example input."""
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
    else:
        import torchvision
        kwargs = {"aux_logits": False, "init_weights": True} if name == "inception_v3" else {}
        model = getattr(torchvision.models, name)(weights=None, **kwargs)
        size = 299 if name == "inception_v3" else 224
        x = torch.randn(1, 3, size, size)
        forward = lambda m, t: m(t)
    return model.eval().cuda(), x.cuda(), forward


def time_ms(fn, iters, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iters):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def bench(name, iters, warmup):
    model, x, forward = build(name)
    with torch.inference_mode():
        eager = time_ms(lambda: forward(model, x), iters, warmup)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm up (cudnn.benchmark picks algorithms) off-graph
            for _ in range(3):
                forward(model, x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            forward(model, x)
        replay = time_ms(graph.replay, iters, warmup)
    return eager, replay


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", default=MODELS, choices=MODELS)
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--warmup", type=int, default=20)
    args = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_bench.py: no CUDA device visible to PyTorch")
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.manual_seed(0)
    for name in args.models:
        eager, replay = bench(name, args.iters, args.warmup)
        print(f"{name} {eager:.3f} {replay:.3f}", flush=True)


if __name__ == "__main__":
    main()
