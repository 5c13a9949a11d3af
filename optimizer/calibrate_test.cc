// Calibration: samples timed by a known device's roofline give that device
// back; signatures are measured once each, weight-only nodes and sources
// never; nothing to fit is an error saying why; a fitted device file reads
// back.
#include "optimizer/calibrate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>

#include "core/text_format.h"
#include "optimizer/test_graphs.h"

namespace tso::opt {
namespace {

using testing::parse;

// Every regime at several sizes, so each parameter decides some samples and
// the launch cost separates from the rates: convolutions and matmuls from
// launch-bound to compute-bound, elementwise operators (memory-bound), pools
// with large windows (vector-compute-bound), and a view.
const char* kModel = R"(graph calibration {
  input x: f32[1,64,56,56]
  input y: f32[1,16,8,8]
  input a: f32[128,768]
  input b: f32[4,16]
  weight w: f32[64,64,3,3]
  weight v: f32[16,16,1,1]
  weight m: f32[768,768]
  weight n: f32[16,16]
  %c1 = conv2d(x, w, pad=same)
  %c2 = conv2d(y, v)
  %m1 = matmul(a, m)
  %m2 = matmul(b, n)
  %r1 = relu(x)
  %r2 = relu(y)
  %r3 = relu(a)
  %s1 = add(x, %r1)
  %s2 = add(b, b)
  %p1 = avgpool(x, kernel=[7,7])
  %p2 = maxpool(y, kernel=[5,5])
  %p3 = avgpool(x, kernel=[3,3], stride=[2,2])
  %v = reshape(%c1, shape=[64,3136])
  output c1 = %v
  output c2 = %c2
  output m1 = %m1
  output m2 = %m2
  output r2 = %r2
  output r3 = %r3
  output s1 = %s1
  output s2 = %s2
  output p1 = %p1
  output p2 = %p2
  output p3 = %p3
})";

Device known_device() {
  Device d;
  d.name = "known";
  d.matmul_flops = 2e11;
  d.vector_flops = 2e10;
  d.bytes_per_s = 3e10;
  d.launch_us = 4;
  return d;
}

void expect_close(double got, double want, double tolerance, const char* what) {
  EXPECT_NEAR(got / want, 1.0, tolerance) << what << ": got " << got << ", want " << want;
}

TEST(Calibrate, RecoversTheDeviceThatTimedTheSamples) {
  const Graph g = parse(kModel);
  const AnalyticCost truth(known_device());
  const std::vector<CalibrationSample> samples = measure_signatures({&g, 1}, truth);
  Expected<Calibration> c = calibrate(samples, {.name = "fitted"});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->converged);
  EXPECT_EQ(c->device.name, "fitted");
  expect_close(c->device.matmul_flops, 2e11, 1e-3, "matmul peak");
  expect_close(c->device.vector_flops, 2e10, 1e-3, "vector peak");
  expect_close(c->device.bytes_per_s, 3e10, 1e-3, "bandwidth");
  expect_close(c->device.launch_us, 4, 1e-3, "launch");
  EXPECT_EQ(c->fitted, 12);
  EXPECT_EQ(c->zero, 1);  // the reshape: the analytic model costs views 0
  EXPECT_LT(c->overall.p90, 1e-4);
  EXPECT_GT(c->matmul_bound, 0);
  EXPECT_GT(c->vector_bound, 0);
  EXPECT_GT(c->memory_bound, 0);
  EXPECT_EQ(c->matmul_bound + c->vector_bound + c->memory_bound, c->fitted);
  ASSERT_EQ(c->per_op.size(), 6u);  // add avgpool conv2d matmul maxpool relu
  EXPECT_EQ(c->per_op[0].first, "add");
  EXPECT_EQ(c->per_op[0].second.samples, 2);
}

TEST(Calibrate, ANegligibleLaunchCostIsZero) {
  const Graph g = parse(kModel);
  Device truth = known_device();
  truth.launch_us = 0;
  Expected<Calibration> c = calibrate(measure_signatures({&g, 1}, AnalyticCost(truth)), {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->device.launch_us, 0);
  expect_close(c->device.matmul_flops, 2e11, 1e-3, "matmul peak");
  expect_close(c->device.vector_flops, 2e10, 1e-3, "vector peak");
  expect_close(c->device.bytes_per_s, 3e10, 1e-3, "bandwidth");
  EXPECT_LT(c->overall.p90, 1e-3);
}

TEST(Calibrate, NoisyMeasurementsGiveTheDeviceWithinTheNoise) {
  const Graph g = parse(kModel);
  std::vector<CalibrationSample> samples =
      measure_signatures({&g, 1}, AnalyticCost(known_device()));
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(-0.05, 0.05);
  for (CalibrationSample& s : samples) s.us *= std::exp(noise(rng));
  Expected<Calibration> c = calibrate(samples, {.name = "noisy"});
  ASSERT_TRUE(c.ok()) << c.error().message;
  expect_close(c->device.matmul_flops, 2e11, 0.1, "matmul peak (seed 7)");
  expect_close(c->device.vector_flops, 2e10, 0.1, "vector peak (seed 7)");
  expect_close(c->device.bytes_per_s, 3e10, 0.1, "bandwidth (seed 7)");
  expect_close(c->device.launch_us, 4, 0.1, "launch (seed 7)");
  EXPECT_LE(c->overall.p90, 0.05);
  EXPECT_GT(c->overall.median, 0);
}

TEST(Calibrate, MeasuresEachSignatureOnceAndNoWeightOnlyNode) {
  const Graph g = parse(R"(graph g {
    input x: f32[1,8]
    weight w: f32[8,8]
    weight u: f32[8,8]
    %wu = add(w, u)
    %a = relu(x)
    %b = relu(x)
    %c = matmul(%a, %wu)
    output b = %b
    output c = %c
  })");
  const std::vector<CalibrationSample> samples =
      measure_signatures({&g, 1}, AnalyticCost(known_device()));
  ASSERT_EQ(samples.size(), 2u);  // relu once, matmul; the add of weights is folded
  EXPECT_EQ(samples[0].node.op, Op::Relu);
  EXPECT_EQ(samples[1].node.op, Op::Matmul);
  EXPECT_EQ(samples[1].inputs.size(), 2u);
  EXPECT_DOUBLE_EQ(samples[0].us, 4 + 1e6 * 64 / 3e10);
  int calls = 0, last_total = 0;
  std::vector<Graph> twice = {g, g};  // a second model adds no signature
  measure_signatures(twice, AnalyticCost(known_device()), [&](int done, int total) {
    ++calls;
    last_total = total;
    EXPECT_EQ(done, calls);
  });
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(last_total, 2);
}

TEST(Calibrate, NothingToFitIsAnError) {
  Expected<Calibration> none = calibrate({}, {});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "nothing to fit: 0 samples, 0 of them views and 0 measured at 0");

  const Graph g = parse(R"(graph g {
    input x: f32[2,8]
    %r = reshape(x, shape=[16])
    %s = relu(x)
    output r = %r
    output s = %s
  })");
  std::vector<CalibrationSample> views = measure_signatures({&g, 1}, AnalyticCost(known_device()));
  ASSERT_EQ(views.size(), 2u);
  views[0].us = 3;  // a view measured at some time is still a view
  views[1].us = 0;
  Expected<Calibration> left_out = calibrate(views, {});
  ASSERT_FALSE(left_out.ok());
  EXPECT_EQ(left_out.error().message,
            "nothing to fit: 2 samples, 1 of them views and 1 measured at 0");

  views[1].us = 5;  // a relu alone: no sample decides the matmul peak
  Expected<Calibration> no_matmul = calibrate(views, {});
  ASSERT_FALSE(no_matmul.ok());
  EXPECT_EQ(no_matmul.error().message,
            "no conv2d, matmul or gemm among the samples: nothing decides the matmul peak");
}

TEST(Calibrate, TheBudgetStopsTheSearch) {
  const Graph g = parse(kModel);
  const std::vector<CalibrationSample> samples =
      measure_signatures({&g, 1}, AnalyticCost(known_device()));
  Expected<Calibration> c = calibrate(samples, {.name = "short", .max_evaluations = 10});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_FALSE(c->converged);
  EXPECT_EQ(c->evaluations, 10);
}

TEST(Calibrate, AFittedDeviceFileReadsBack) {
  Device d = known_device();
  d.launch_us = 3.14159265;
  Expected<Device> back = parse_device(device_json(d, "fitted from 13 signatures"), "d.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->name, "known");
  EXPECT_DOUBLE_EQ(back->matmul_flops, 2e11);
  EXPECT_DOUBLE_EQ(back->bytes_per_s, 3e10);
  EXPECT_DOUBLE_EQ(back->launch_us, 3.14159);  // six significant digits
  EXPECT_NE(
      device_json(d, "fitted from 13 signatures").find(R"("source": "fitted from 13 signatures")"),
      std::string::npos);
  EXPECT_EQ(save_device(d, "x", "/nonexistent/dir/d.json").error().message,
            "/nonexistent/dir/d.json: cannot write: No such file or directory");
}

TEST(Calibrate, TheShippedCpuDeviceLoadsAndSaysWhereItCameFrom) {
  Expected<Device> d = load_device("optimizer/devices/cpu-epyc-2c.json");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_NE(d->name.find("EPYC"), std::string::npos);
  EXPECT_GT(d->matmul_flops, d->vector_flops);
  std::ifstream in("optimizer/devices/cpu-epyc-2c.json");
  const std::string text(std::istreambuf_iterator<char>(in), {});
  EXPECT_NE(text.find(R"("source": "fitted by tso calibrate to 320 operator signatures)"),
            std::string::npos);
}

}  // namespace
}  // namespace tso::opt
