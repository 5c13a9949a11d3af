#include "runtime/common/cost_table.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace tso::rt {
namespace {

CostTable sample() {
  CostTable t;
  t.device = "Test GPU, 80.0 GiB, sm_90";
  t.tf32 = false;
  t.model = "m.onnx";
  t.entries.push_back({"relu(f32[4])", "relu", "unary", 0.004, 0.003, 100, 2, 2});
  t.entries.push_back({"add(f32[4],f32[4])", "add", "binary", 0.005, 0.004, 100, 1});
  return t;
}

TEST(CostTable, JsonIsSortedBySignatureAndRoundTrips) {
  std::string json = cost_table_json(sample());
  EXPECT_LT(json.find("add(f32[4],f32[4])"), json.find("relu(f32[4])"));
  EXPECT_EQ(json.find("{\n  \"format\": \"tso-cost-table\",\n  \"version\": 1,"), 0u) << json;
  Expected<CostTable> back = parse_cost_table(json, "t.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->device, "Test GPU, 80.0 GiB, sm_90");
  EXPECT_FALSE(back->tf32);
  ASSERT_EQ(back->entries.size(), 2u);
  EXPECT_EQ(back->entries[0].signature, "add(f32[4],f32[4])");
  EXPECT_DOUBLE_EQ(back->entries[1].median_ms, 0.004);
  EXPECT_EQ(back->entries[1].occurrences, 2);
  EXPECT_EQ(back->entries[1].measurements, 2);
  EXPECT_EQ(back->entries[0].measurements, 1);
  EXPECT_EQ(cost_table_json(*back), json);
}

TEST(CostTable, MalformedTablesAreErrorsNamingTheSource) {
  EXPECT_EQ(parse_cost_table("{", "c.json").error().message, "c.json: not valid JSON");
  EXPECT_EQ(parse_cost_table(R"({"format": "other"})", "c.json").error().message,
            "c.json: not a tso cost table (format is \"other\")");
  Expected<CostTable> missing =
      parse_cost_table(R"({"format": "tso-cost-table", "version": 1})", "c.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message.rfind("c.json: malformed cost table:", 0), 0u)
      << missing.error().message;
  EXPECT_NE(parse_cost_table(R"({"format": "tso-cost-table", "version": 2})", "c.json")
                .error()
                .message.find("version 2"),
            std::string::npos);
}

// The format is fixed at version 1: a table written before runtime/common
// existed still parses.
TEST(CostTable, AVersion1TableParses) {
  Expected<CostTable> t = parse_cost_table(R"json({"format": "tso-cost-table", "version": 1,
    "device": "NVIDIA H100 80GB HBM3, 79.1 GiB, sm_90", "tf32": true, "model": "resnet50.onnx",
    "entries": [{"signature": "relu(f32[1,64,112,112])", "op": "relu", "kernel": "unary",
                 "median_ms": 0.0061, "min_ms": 0.0059, "samples": 200, "occurrences": 1}]})json",
                                           "old.json");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->model, "resnet50.onnx");
  ASSERT_EQ(t->entries.size(), 1u);
  EXPECT_EQ(t->entries[0].kernel, "unary");
  EXPECT_EQ(t->entries[0].samples, 200);
  EXPECT_EQ(t->entries[0].measurements, 1) << "absent: measured once";
}

TEST(CostTable, AMeasurementCountThatIsNoCountIsRefused) {
  std::string json = cost_table_json(sample());
  const std::string count = "\"measurements\": 2";
  ASSERT_NE(json.find(count), std::string::npos) << json;
  json.replace(json.find(count), count.size(), "\"measurements\": \"twice\"");
  Expected<CostTable> t = parse_cost_table(json, "c.json");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message,
            "c.json: entry relu(f32[4]): measurements is \"twice\", not a count");
}

TEST(CostTable, NegativeTimesAreRefused) {
  std::string json = cost_table_json(sample());
  const std::string relu_median = "\"median_ms\": 0.004";
  ASSERT_NE(json.find(relu_median), std::string::npos) << json;
  json.replace(json.find(relu_median), relu_median.size(), "\"median_ms\": -0.004");
  Expected<CostTable> t = parse_cost_table(json, "c.json");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "c.json: entry relu(f32[4]) has a negative time");
}

TEST(CostTable, WriteIsAtomicAndReadable) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "tso_cost_table_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "costs.json").string();
  ASSERT_TRUE(write_cost_table(sample(), path).ok());
  // Nothing beside the table: its temporary was renamed.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
  Expected<CostTable> back = read_cost_table(path);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->entries.size(), 2u);
  Status bad = write_cost_table(sample(), (dir / "no_such_dir" / "c.json").string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("c.json: cannot write"), std::string::npos);
  EXPECT_FALSE(read_cost_table((dir / "absent.json").string()).ok());
  std::filesystem::remove_all(dir);
}

TEST(CostTable, DevicesDifferingInTheRuntimeOnly) {
  const std::string cpu = "cpu: X, 2 threads, oneDNN 3.2.0, avx2, constants cold, runtime ";
  EXPECT_TRUE(differ_in_runtime_only(cpu + "0123456789ab", cpu + "ba9876543210"));
  EXPECT_FALSE(differ_in_runtime_only(cpu + "0123456789ab", cpu + "0123456789ab"));
  EXPECT_FALSE(differ_in_runtime_only(cpu + "0123456789ab", "cpu: X, 4 threads, oneDNN 3.2.0, "
                                                            "avx2, constants cold, runtime 0"));
  // Where the revision is not last (the GPU cache's "..., TF32 on").
  const std::string gpu = "G, 80.0 GiB, sm_90, CUDA 13.0, cuDNN 9.19.0, runtime ";
  EXPECT_TRUE(differ_in_runtime_only(gpu + "0a, TF32 on", gpu + "1b, TF32 on"));
  EXPECT_FALSE(differ_in_runtime_only(gpu + "0a, TF32 on", gpu + "1b, TF32 off"));
  EXPECT_FALSE(differ_in_runtime_only("cpu: X, constants cold 11", "cpu: X, constants cold 10"));
}

}  // namespace
}  // namespace tso::rt
