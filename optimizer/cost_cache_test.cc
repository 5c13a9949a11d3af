// The on-demand measured cost model: a miss measures once and a hit does
// not, the cache persists across instances, a foreign or corrupt file is an
// error naming it, failed measurements fall back and are not cached.
#include "optimizer/cost_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/signature.h"
#include "core/text_format.h"

namespace tso::opt {
namespace {

namespace fs = std::filesystem;

const char* kGraph = R"(graph g {
  input x: f32[1,2,4,4]
  weight w: f32[3,2,1,1]
  %a = conv2d(x, w)
  %b = relu(%a)
  %c = relu(%b)
  %d = sigmoid(%c)
  output y = %d
})";

class Constant : public CostModel {
 public:
  double node_us(const Node&, std::span<const TensorType>) const override { return 1000; }
  std::string describe() const override { return "constant"; }
};

struct CostCache : ::testing::Test {
  void SetUp() override {
    Expected<Graph> g = parse_graph(kGraph, "test.tso");
    ASSERT_TRUE(g.ok()) << g.error().message;
    graph = std::move(*g);
    dir = fs::path(::testing::TempDir()) /
          ("cost_cache_" +
           std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir);
    path = (dir / "sub" / "costs.json").string();
  }
  void TearDown() override { fs::remove_all(dir); }

  // Times every node as 0.5 ms (sigmoid fails), counting calls.
  MeasureFn measure() {
    return [this](const Node& n, std::span<const TensorType> in) -> Expected<rt::CostEntry> {
      ++calls;
      if (n.op == Op::Sigmoid) return Error{"no sigmoid here"};
      rt::CostEntry e;
      e.signature = op_signature(n, in);
      e.op = std::string(op_name(n.op));
      e.kernel = "fake";
      e.median_ms = e.min_ms = 0.5;
      e.samples = 1;
      return e;
    };
  }

  double cost(const CostModel& m) {
    GraphIndex index(graph);
    return graph_cost(graph, index, m);
  }

  Graph graph;
  fs::path dir;
  std::string path;
  int calls = 0;
  Constant fallback;
};

TEST_F(CostCache, MissMeasuresOnceHitDoesNot) {
  Expected<std::unique_ptr<CachedCost>> c =
      CachedCost::open(path, "dev A", measure(), nullptr, &fallback);
  ASSERT_TRUE(c.ok()) << c.error().message;
  // conv 500 + two relus of one signature 500 + 500 + sigmoid (fails) 1000.
  EXPECT_DOUBLE_EQ(cost(**c), 2500);
  EXPECT_EQ(calls, 3);  // conv, relu, sigmoid
  EXPECT_DOUBLE_EQ(cost(**c), 2500);
  EXPECT_EQ(calls, 3);  // nothing new, the failure not retried
  EXPECT_EQ((*c)->measured(), 2);
  EXPECT_EQ((*c)->found(), 0);
  EXPECT_EQ((*c)->loaded(), 0);
  ASSERT_EQ((*c)->failed().size(), 1u);
  EXPECT_EQ((*c)->failed().begin()->second, "no sigmoid here");
}

TEST_F(CostCache, PersistsAcrossInstances) {
  {
    Expected<std::unique_ptr<CachedCost>> c =
        CachedCost::open(path, "dev A", measure(), nullptr, &fallback);
    ASSERT_TRUE(c.ok()) << c.error().message;
    cost(**c);
    EXPECT_FALSE(fs::exists(path));  // written at the end only
    Status s = (*c)->save();
    ASSERT_TRUE(s.ok()) << s.error().message;
  }
  ASSERT_TRUE(fs::exists(path));  // folder created
  Expected<rt::CostTable> t = rt::read_cost_table(path);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->device, "dev A");
  EXPECT_EQ(t->entries.size(), 2u);  // the failed sigmoid not cached
  calls = 0;
  Expected<std::unique_ptr<CachedCost>> c =
      CachedCost::open(path, "dev A", measure(), nullptr, &fallback);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ((*c)->loaded(), 2);
  EXPECT_DOUBLE_EQ(cost(**c), 2500);
  EXPECT_EQ(calls, 1);  // only the sigmoid, which failed again
  EXPECT_EQ((*c)->measured(), 0);
  EXPECT_EQ((*c)->found(), 2);
  const auto before = fs::last_write_time(path);
  ASSERT_TRUE((*c)->save().ok());
  EXPECT_EQ(fs::last_write_time(path), before);  // nothing new, not rewritten
}

TEST_F(CostCache, OtherDeviceIsAnErrorNamingTheFile) {
  {
    Expected<std::unique_ptr<CachedCost>> c =
        CachedCost::open(path, "dev A", measure(), nullptr, &fallback);
    ASSERT_TRUE(c.ok());
    cost(**c);
    ASSERT_TRUE((*c)->save().ok());
  }
  Expected<std::unique_ptr<CachedCost>> c =
      CachedCost::open(path, "dev B", measure(), nullptr, &fallback);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find(path), std::string::npos) << c.error().message;
  EXPECT_NE(c.error().message.find("'dev A'"), std::string::npos) << c.error().message;
  EXPECT_NE(c.error().message.find("'dev B'"), std::string::npos) << c.error().message;
}

TEST_F(CostCache, CorruptFileIsAnErrorNamingTheFile) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << "{\"format\": \"something else\"}";
  Expected<std::unique_ptr<CachedCost>> c =
      CachedCost::open(path, "dev A", measure(), nullptr, &fallback);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find(path), std::string::npos) << c.error().message;
}

TEST(CostCacheFileName, DependsOnTheDevice) {
  EXPECT_EQ(cost_cache_file_name("a"), cost_cache_file_name("a"));
  EXPECT_NE(cost_cache_file_name("a"), cost_cache_file_name("b"));
  EXPECT_EQ(cost_cache_file_name("a").size(), std::string("costs-0123456789abcdef.json").size());
}

}  // namespace
}  // namespace tso::opt
