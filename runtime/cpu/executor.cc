#include "runtime/cpu/executor.h"

#include <immintrin.h>
#include <omp.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "runtime/common/arena.h"
#include "runtime/common/memory.h"
#include "runtime/cpu/cache_residency.h"
#include "runtime/cpu/constant_store.h"
#include "runtime/cpu/plan.h"
#include "runtime/cpu/widen_f16.h"

namespace tso::cpu {

namespace {

constexpr int64_t kAlignment = 64;

}  // namespace

struct Executor::Impl : Bindings {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  mutable dnnl::stream strm{engine};
  Plan plan;
  rt::AlignedBuffer<std::byte> static_block, arena, scratch;
  memory scratch_mem;
  std::vector<Run> runs;
  std::vector<int> run_steps;      // plan step of each run
  std::vector<int> run_constants;  // kHost, kStatic and kShared tensors the run steps read
  std::shared_ptr<ConstantStore> store;
  std::vector<std::shared_ptr<const SharedConstant>> shared;  // of each kShared tensor
  ExecutorStats stats;
  int threads = 1;

  std::byte* data(int t) const override {
    const PlanTensor& p = plan.tensors[t];
    switch (p.storage) {
      case Storage::kHost:
        return const_cast<std::byte*>(p.host_bytes);
      case Storage::kInput:
      case Storage::kStatic:
        return static_block.get() + p.offset;
      case Storage::kShared:
        return shared[t] ? shared[t]->bytes.get() : nullptr;
      case Storage::kArena:
        return arena.get() + p.offset;
      case Storage::kView:
        return data(p.parent) + p.view_offset;
    }
    return nullptr;
  }
  memory mem(int t) const override { return memory(plan.tensors[t].md, engine, data(t)); }
  memory mem(int t, const memory::desc& md) const override { return memory(md, engine, data(t)); }
  memory scratchpad() const override { return scratch_mem; }
  dnnl::stream& stream() const override { return strm; }

  int root(int t) const {
    while (plan.tensors[t].storage == Storage::kView) t = plan.tensors[t].parent;
    return t;
  }

  // Static block by bump allocation; the arena by lifetime over run steps.
  Status place() {
    std::vector<int64_t> sizes = {plan.scratchpad_bytes};
    for (const PlanTensor& t : plan.tensors) sizes.push_back(t.bytes);
    TSO_RETURN_IF_ERROR(rt::checked_total(sizes, kAlignment, "the CPU plan"));
    int64_t static_bytes = 0, shared_bytes = 0;
    for (PlanTensor& t : plan.tensors)
      if (t.storage == Storage::kInput || t.storage == Storage::kStatic) {
        t.offset = static_bytes;
        static_bytes += rt::align_up(t.bytes, kAlignment);
      } else if (t.storage == Storage::kShared) {
        shared_bytes += rt::align_up(t.bytes, kAlignment);
      }
    shared.resize(plan.tensors.size());
    std::vector<int> index(plan.tensors.size(), -1);
    std::vector<rt::Lifetime> lives;
    int step = 0;
    auto touch = [&](int t, int at) {
      t = root(t);
      if (plan.tensors[t].storage != Storage::kArena) return;
      if (index[t] < 0) {
        index[t] = static_cast<int>(lives.size());
        lives.push_back({plan.tensors[t].bytes, at, at});
      }
      rt::Lifetime& l = lives[index[t]];
      l.first = std::min(l.first, at);
      l.last = std::max(l.last, at);
    };
    for (const PlanStep& s : plan.steps) {
      if (s.prologue) continue;
      for (int t : s.writes) touch(t, step);
      for (int t : s.reads) touch(t, step);
      ++step;
    }
    for (int t : plan.outputs) touch(t, step);
    const rt::ArenaLayout layout = rt::plan_arena(lives, kAlignment);
    for (size_t t = 0; t < plan.tensors.size(); ++t)
      if (index[t] >= 0) plan.tensors[t].offset = layout.offsets[index[t]];
    stats.arena_bytes = layout.peak_bytes;
    stats.static_bytes = static_bytes + shared_bytes;
    stats.scratchpad_bytes = plan.scratchpad_bytes;
    for (const PlanTensor& t : plan.tensors)
      if (t.storage == Storage::kHost) stats.static_bytes += t.bytes;
    TSO_RETURN_IF_ERROR(rt::check_allocation(
        layout.peak_bytes + static_bytes + shared_bytes + plan.scratchpad_bytes,
        "the CPU plan (arena " + rt::format_bytes(layout.peak_bytes) + ", static " +
            rt::format_bytes(static_bytes + shared_bytes) + ", scratchpad " +
            rt::format_bytes(plan.scratchpad_bytes) + ")"));
    static_block = rt::aligned_buffer(static_bytes, kAlignment);
    arena = rt::aligned_buffer(layout.peak_bytes, kAlignment);
    scratch = rt::aligned_buffer(plan.scratchpad_bytes, kAlignment);
    if (!static_block || !arena || !scratch)
      return Error{"out of memory allocating the CPU plan's " +
                   rt::format_bytes(layout.peak_bytes + static_bytes) + " of buffers"};
    // Inputs are zeroed now, the prologue's tensors as it first touches them
    // (bind): the block's pages are taken up as weights are copied in, while
    // the stored weights copied before are freed.
    for (const PlanTensor& t : plan.tensors)
      if (t.storage == Storage::kInput) std::memset(static_block.get() + t.offset, 0, t.bytes);
    scratch_mem = memory(memory::desc({std::max<int64_t>(plan.scratchpad_bytes, 1)},
                                      memory::data_type::u8, memory::format_tag::a),
                         engine, scratch.get());
    return {};
  }

  // The weight copy (kShared) prologue step `s` writes, or -1.
  int shared_write(const PlanStep& s) const {
    if (!s.prologue || s.writes.size() != 1) return -1;
    return plan.tensors[s.writes[0]].storage == Storage::kShared ? s.writes[0] : -1;
  }

  // The copy of kShared tensor `t` another executor made and still holds.
  std::shared_ptr<const SharedConstant> find_shared(int t) {
    const int source = plan.tensors[t].source;
    return store->find(data(source), plan.tensors[source].md, plan.tensors[t].md);
  }
  void publish_shared(int t) {
    const int source = plan.tensors[t].source;
    store->publish(data(source), plan.tensors[source].md, plan.tensors[t].md, shared[t]);
  }

  // Binds every step; runs the prologue once and keeps the run steps. A
  // weight copy another executor made is taken, and its reorder skipped. A
  // stored weight (kHost) no run step reads is given up after the last
  // prologue step that reads it: freed there, unless the graph or a shared
  // copy still holds it.
  Status bind() {
    const size_t n = plan.tensors.size();
    std::vector<bool> read_at_run(n, false), zeroed(n, false);
    std::vector<int> last_prologue_read(n, -1);
    for (size_t i = 0; i < plan.steps.size(); ++i)
      for (int t : plan.steps[i].reads) {
        if (plan.steps[i].prologue)
          last_prologue_read[root(t)] = static_cast<int>(i);
        else
          read_at_run[root(t)] = true;
      }
    for (int t : plan.outputs) read_at_run[root(t)] = true;
    auto zero_static = [&](int t) {
      t = root(t);
      if (plan.tensors[t].storage != Storage::kStatic || zeroed[t]) return;
      std::memset(data(t), 0, plan.tensors[t].bytes);
      zeroed[t] = true;
    };
    auto give_up = [&](int t) {
      PlanTensor& p = plan.tensors[t];
      if (p.storage != Storage::kHost || read_at_run[t] || !p.host_bytes) return;
      stats.static_bytes -= p.bytes;
      p.host.reset();
      p.host_bytes = nullptr;
    };
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      PlanStep& s = plan.steps[i];
      for (int t : s.reads) zero_static(t);
      for (int t : s.writes) zero_static(t);
      const int copy = shared_write(s);
      bool found = false;
      if (copy >= 0) {
        const PlanTensor& c = plan.tensors[copy];
        shared[copy] = find_shared(copy);
        found = shared[copy] != nullptr;
        if (found) {
          stats.shared_bytes += rt::align_up(c.bytes, kAlignment);
        } else {
          shared[copy] = ConstantStore::allocate(c.bytes, plan.tensors[root(c.source)].host);
          if (!shared[copy])
            return Error{"out of memory allocating " + rt::format_bytes(c.bytes) + " for " +
                         s.nodes};
        }
      }
      if (!found) {
        Status st = guarded(s, [&] {
          Run r = s.bind(*this);
          if (s.prologue) {
            r();
            strm.wait();
          } else {
            runs.push_back(std::move(r));
            run_steps.push_back(static_cast<int>(i));
          }
        });
        if (!st) return st;
        if (copy >= 0) publish_shared(copy);
      }
      if (s.prologue)
        for (int t : s.reads)
          if (last_prologue_read[root(t)] == static_cast<int>(i)) give_up(root(t));
    }
    for (size_t t = 0; t < n; ++t) {
      zero_static(static_cast<int>(t));
      give_up(static_cast<int>(t));
      const PlanTensor& p = plan.tensors[t];
      if (read_at_run[t] && (p.storage == Storage::kHost || p.storage == Storage::kStatic ||
                             p.storage == Storage::kShared))
        run_constants.push_back(static_cast<int>(t));
    }
    return {};
  }

  template <class F>
  static Status guarded(const PlanStep& s, F&& f) {
    try {
      f();
      return {};
    } catch (const dnnl::error& e) {
      return Error{s.nodes + ": " + s.what + ": oneDNN " + e.what() + " (status " +
                   std::to_string(int(e.status)) + ")"};
    } catch (const StepError& e) {
      return Error{s.nodes + ": " + e.what()};
    }
  }

  Status run_all() {
    omp_set_num_threads(threads);
    for (size_t i = 0; i < runs.size(); ++i) {
      try {
        runs[i]();
      } catch (const dnnl::error& e) {
        const PlanStep& s = plan.steps[run_steps[i]];
        return Error{s.nodes + ": " + s.what + ": oneDNN " + e.what()};
      } catch (const StepError& e) {
        return Error{plan.steps[run_steps[i]].nodes + ": " + e.what()};
      }
    }
    strm.wait();
    return {};
  }
};

Executor::Executor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executor::~Executor() = default;

Expected<std::unique_ptr<Executor>> Executor::create(const Graph& g,
                                                     const ExecutorOptions& options) {
  return create(g, options, nullptr);
}

Expected<std::unique_ptr<Executor>> Executor::create_releasing_weights(
    Graph& g, const ExecutorOptions& options) {
  return create(g, options, &g);
}

Expected<std::unique_ptr<Executor>> Executor::create(const Graph& g, const ExecutorOptions& options,
                                                     Graph* release) {
  auto impl = std::make_unique<Impl>();
  impl->threads = options.threads > 0 ? options.threads : omp_get_num_procs();
  impl->store = options.constants;
  omp_set_num_threads(impl->threads);
  Expected<std::optional<Graph>> wide = widen_f16(g);
  if (!wide) return wide.error();
  Expected<Plan> plan = build_plan(*wide ? **wide : g, options, impl->engine);
  if (!plan) return plan.error();
  impl->plan = std::move(*plan);
  if (release) release->release_weight_data();
  TSO_RETURN_IF_ERROR(impl->place());
  TSO_RETURN_IF_ERROR(impl->bind());
  ExecutorStats& s = impl->stats;
  s.steps = static_cast<int>(impl->runs.size());
  s.fused_nodes = impl->plan.fused_nodes;
  s.reorders = impl->plan.reorders;
  s.views = impl->plan.views;
  s.threads = impl->threads;
  return std::unique_ptr<Executor>(new Executor(std::move(impl)));
}

Status Executor::set_input(const std::string& name, std::span<const std::byte> bytes) {
  auto it = impl_->plan.inputs.find(name);
  if (it == impl_->plan.inputs.end()) return Error{"the graph has no input '" + name + "'"};
  const PlanTensor& t = impl_->plan.tensors[it->second];
  if (static_cast<int64_t>(bytes.size()) != t.bytes)
    return Error{"input '" + name + "' is " + to_string(t.type) + " (" + std::to_string(t.bytes) +
                 " bytes), given " + std::to_string(bytes.size()) + " bytes"};
  std::memcpy(impl_->data(it->second), bytes.data(), bytes.size());
  return {};
}

Status Executor::set_input(const std::string& name, std::span<const float> values) {
  return set_input(name, std::as_bytes(values));
}

Status Executor::run() { return impl_->run_all(); }

Expected<std::vector<std::byte>> Executor::output_bytes(int index) const {
  if (index < 0 || index >= static_cast<int>(impl_->plan.outputs.size()))
    return Error{"no output " + std::to_string(index)};
  const int t = impl_->plan.outputs[index];
  const std::byte* p = impl_->data(t);
  const int64_t n = byte_size(impl_->plan.tensors[t].type);
  return std::vector<std::byte>(p, p + n);
}

Expected<std::vector<float>> Executor::output(int index) const {
  Expected<std::vector<std::byte>> bytes = output_bytes(index);
  if (!bytes) return bytes.error();
  const TensorType& type = impl_->plan.tensors[impl_->plan.outputs[index]].type;
  if (type.dtype != DType::kF32)
    return Error{"output " + std::to_string(index) + " is " + to_string(type)};
  std::vector<float> v(bytes->size() / sizeof(float));
  std::memcpy(v.data(), bytes->data(), bytes->size());
  return v;
}

Expected<std::vector<double>> Executor::time_runs(int iters, int warmup) {
  for (int i = 0; i < warmup; ++i) TSO_RETURN_IF_ERROR(run());
  std::vector<double> ms;
  for (int i = 0; i < iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    TSO_RETURN_IF_ERROR(run());
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return ms;
}

Expected<std::vector<StepTime>> Executor::profile_steps(int iters) {
  std::vector<StepTime> times;
  for (int i : impl_->run_steps) {
    const PlanStep& s = impl_->plan.steps[i];
    times.push_back({s.what, s.nodes, 0, s.flops, s.product});
  }
  omp_set_num_threads(impl_->threads);
  for (int it = 0; it < iters; ++it)
    for (size_t k = 0; k < impl_->runs.size(); ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      try {
        impl_->runs[k]();
      } catch (const dnnl::error& e) {
        return Error{times[k].nodes + ": " + times[k].what + ": oneDNN " + e.what()};
      } catch (const StepError& e) {
        return Error{times[k].nodes + ": " + e.what()};
      }
      impl_->strm.wait();
      times[k].ms +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
  return times;
}

int64_t Executor::evict_constants() {
  int64_t bytes = 0;
  for (int t : impl_->run_constants) {
    const int64_t n = impl_->plan.tensors[t].bytes;
    flush_from_caches(impl_->data(t), n);
    bytes += n;
  }
  _mm_mfence();
  return bytes;
}

ExecutorStats Executor::stats() const { return impl_->stats; }

std::string Executor::library_info() {
  const dnnl_version_t* v = dnnl_version();
  using dnnl::cpu_isa;
  static const std::pair<cpu_isa, const char*> kNames[] = {
      {cpu_isa::sse41, "sse41"},
      {cpu_isa::avx, "avx"},
      {cpu_isa::avx2, "avx2"},
      {cpu_isa::avx2_vnni, "avx2_vnni"},
      {cpu_isa::avx2_vnni_2, "avx2_vnni_2"},
      {cpu_isa::avx512_core, "avx512_core"},
      {cpu_isa::avx512_core_vnni, "avx512_core_vnni"},
      {cpu_isa::avx512_core_bf16, "avx512_core_bf16"},
      {cpu_isa::avx512_core_fp16, "avx512_core_fp16"},
      {cpu_isa::avx512_core_amx, "avx512_core_amx"},
      {cpu_isa::avx512_core_amx_fp16, "avx512_core_amx_fp16"},
  };
  const cpu_isa effective = dnnl::get_effective_cpu_isa();
  std::string isa = "isa " + std::to_string(static_cast<int>(effective));
  for (const auto& [value, name] : kNames)
    if (value == effective) isa = name;
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + ", " + isa;
}

}  // namespace tso::cpu
