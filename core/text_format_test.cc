#include "core/text_format.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/testing/random_graph.h"

namespace tso {
namespace {

// Canonical texts: print(parse(text)) reproduces each byte for byte. Together
// they use every operator of core/ops.def (checked below).
const char* const kCanonical[] = {
    R"(graph block1 {
  input x: f32[1,3,8,8]
  weight w: f32[4,3,3,3]
  weight "onnx::Conv_12": f32[4]
  %0: f32[1,4,8,8] = conv2d(x, w, "onnx::Conv_12", pad=same, act=relu)
  %1: f32[1,2,8,8], %2: f32[1,2,8,8] = split(%0, axis=1, sizes=[2,2])
  %3: f32[1,2,8,8] = opaque(%1, op_type="Foo", payload="\x01\x02")
  output y = %2
  output out.1 = %3
}
)",
    R"(graph cnn {
  input x: f32[2,4,6,6]
  weight w: f32[4,1,3,3]
  weight k: f32[8,4,1,1]
  weight gamma: f32[8]
  weight beta: f32[8]
  weight mean: f32[8]
  weight var: f32[8]
  %0: f32[4,4,3,3] = const_eye_conv(shape=[4,4,3,3])
  %1: f32[2,4,6,6] = conv2d(x, %0, pad=same)
  %2: f32[2,4,3,3] = conv2d(%1, w, stride=[2,2], pad=[1,1,1,1], groups=4, act=tanh)
  %3: f32[8,4,3,3] = enlarge(k, kernel=[3,3])
  %4: f32[2,8,3,3] = conv2d(%2, %3, pad=same, dilation=[2,2])
  %5: f32[2,8,3,3] = batchnorm(%4, gamma, beta, mean, var, epsilon=0.001)
  %6: f32[2,8,2,2] = avgpool(%5, kernel=[2,2], ceil_mode=1, count_include_pad=1)
  %7: f32[2,8,1,1] = maxpool(%6, stride=[2,2], kernel=[2,2])
  %8: f32[8,1,1,1] = const_pool(shape=[8,1,1,1])
  %9: f32[2,8,1,1] = conv2d(%7, %8, groups=8)
  %10: f32[2,8,1,1] = global_avgpool(%5)
  %11: f32[2,8,1,1] = add(%9, %10)
  %12: f32[2,8] = flatten(%11, axis=1)
  output logits = %12
}
)",
    R"(graph attention {
  input x: f32[2,4,8]
  input scale: f32[]
  weight g: f32[8]
  weight b: f32[8]
  weight wq: f32[8,8]
  %0: f32[2,4,8] = layernorm(x, g, b, axis=2, epsilon=1e-06)
  %1: f32[2,4,8] = matmul(%0, wq)
  %2: f32[2,8,4] = transpose(%1, perm=[0,2,1])
  %3: f32[2,4,4] = matmul(%1, %2, act=sigmoid)
  %4: f32[2,4,4] = smul(%3, scale)
  %5: f32[2,4,4] = softmax(%4, axis=2)
  %6: f32[2,4,1] = reduce_mean(%5, axes=[2])
  %7: f32[2,4,4] = sub(%5, %6)
  %8: f32[2,4,4] = div(%7, %6)
  %9: f32[2,4,4] = pow(%8, %7)
  %10: f32[2,4,4] = sqrt(%9)
  %11: f32[2,4,4] = neg(%10)
  %12: f32[2,4,4] = exp(%11)
  %13: f32[2,4,4] = erf(%12)
  %14: f32[2,4,4] = gelu(%13)
  %15: f32[2,4,4] = clip(%14, min=0.0, max=6.0)
  %16: f32[2,4,4] = const_ones(shape=[2,4,4])
  %17: f32[2,4,4] = mul(%15, %16)
  %18: f32[4,4] = const_eye(shape=[4,4])
  %19: f32[2,4,4] = matmul(%17, %18)
  %20: f32[2,4,4] = relu(%19)
  %21: f32[2,4,4] = sigmoid(%20)
  %22: f32[2,4,4] = tanh(%21)
  %23: f32[8,4] = reshape(%22, shape=[8,4])
  %24: f32[2,4] = squeeze(%6, axes=[2])
  %25: f32[1,2,4] = unsqueeze(%24, axes=[0])
  %26: f32[2,2,4] = slice(%22, axes=[1], starts=[1], ends=[3], steps=[1])
  %27: f32[2,4,4] = pad(%26, pads=[0,1,0,0,1,0], value=0.5)
  %28: f32[2,8,4] = concat(%22, %27, axis=1)
  output out = %28
  output flat = %23
  output row/1 = %25
}
)",
    R"(graph "mlp \"v2\"" {
  input x: f32[2,8]
  weight w1: f32[4,8]
  weight b1: f32[4]
  input "a b": f64[3]
  input "tab\there": f64[3]
  input "caf\xc3\xa9": i64[0,2]
  %0: f32[2,4] = gemm(x, w1, b1, act=relu, alpha=0.5, trans_b=1)
  %1: f32[2,1], %2: f32[2,3] = split(%0, axis=1, sizes=[1,3])
  %3: f64[3] = add("a b", "tab\there")
  %4: bool[], %5: i64[7] = opaque(%3, "caf\xc3\xa9", op_type="Nms", domain="com.x", payload="\x00\"\\\n")
  output a = %1
  output b = %2
  output "same tensor" = %2
  output x = x
  output "%4" = %4
  output input.1 = %5
}
)",
    R"(graph nan_guard {
  input p: f32[1,2,4,4]
  weight zero: f32[1]
  %0: bool[1,2,4,4] = isnan(p)
  %1: f32[1,2,4,4] = where(%0, zero, p)
  output y = %1
}
)",
    R"(graph correction {
  input y: f32[1,2,4,5]
  input box: f32[1,2,2,3]
  %0: f32[1,2,4,5] = update_slice(y, box, starts=[0,0,1,2])
  output fixed = %0
}
)",
    R"(graph embed {
  input ids: i64[1,8]
  weight table: f32[100,16]
  weight first: i32[]
  weight pick: i64[1,8,2]
  %0: f32[1,8,16] = gather(table, ids, axis=0)
  %1: f32[1,16] = gather(%0, first, axis=1)
  %2: f32[1,8,2] = gather_elements(%0, pick, axis=2)
  output y = %1
  output picked = %2
}
)",
    R"(graph mask {
  input m: i64[2,1,1,8]
  %0: i64[2,1,8,8] = expand(m, shape=[2,1,8,8])
  %1: f32[2,1,8,8] = cast(%0, to="f32")
  output bias = %1
}
)",
    R"(graph darknet {
  input x: f32[1,4,6,6]
  %0: f32[1,4,6,6] = leaky_relu(x, alpha=0.1)
  %1: f32[1,4,6,6] = softplus(%0)
  output y = %1
}
)",
    R"(graph grn {
  input x: f32[1,6,6,8]
  %0: f32[1,1,1,8] = reduce_l2(x, axes=[1,2])
  %1: f32[1,1,1,1] = reduce_max(%0, axes=[3])
  %2: f32[1] = reduce_sum(%0, axes=[1,2,3], keepdims=0)
  output g = %1
  output s = %2
}
)",
    R"(graph warp {
  input x: f32[1,2,4,5]
  input g: f32[1,3,3,2]
  %0: f32[1,2,3,3] = grid_sample(x, g, mode="nearest", padding_mode="reflection", align_corners=1)
  %1: f32[1,2,3,3] = grid_sample(x, g)
  output y = %0
  output z = %1
}
)",
    R"(graph nll_head {
  input x: f32[2,10]
  input b: f32[10]
  %0: f32[2,10] = abs(x)
  %1: f32[2,10] = log(%0)
  %2: f32[2,10] = max(%1, b)
  %3: f32[2,10] = min(%2, x)
  %4: f32[2,10] = log_softmax(%3, axis=1)
  output y = %4
}
)",
    R"(graph proposals {
  input x: f32[2,9]
  %0: f32[2,4], %1: i64[2,4] = top_k(x, axis=1, k=4, largest=0, sorted=0)
  %2: f32[2,9], %3: i64[2,9] = top_k(x, axis=1, k=9)
  output y = %0
  output z = %1
  output u = %3
}
)",
    R"(graph quantized {
  input x: f32[1,4,3,3]
  weight s: f32[]
  weight z: u8[]
  weight cs: f32[4]
  weight cz: i8[4]
  %0: u8[1,4,3,3] = quantize_linear(x, s, z, axis=0)
  %1: f32[1,4,3,3] = dequantize_linear(%0, s, z, axis=0)
  %2: i8[1,4,3,3] = quantize_linear(%1, cs, cz, axis=1)
  %3: f32[1,4,3,3] = dequantize_linear(%2, cs, cz, axis=1)
  output y = %3
  output q = %2
}
)",
    R"(graph timestep_embedding {
  input t: f32[1,8]
  %0: f32[1,8] = sin(t)
  %1: f32[1,8] = cos(t)
  output y = %0
  output z = %1
}
)",
    R"(graph positions {
  input ids: i64[2,8]
  input mask: i64[2,8]
  weight pad: i64[]
  %0: bool[2,8] = equal(ids, pad)
  %1: bool[2,8] = not(%0)
  %2: i64[2,8] = cast(%1, to="i64")
  %3: i64[2,8] = cumsum(%2, axis=1, exclusive=1, reverse=1)
  %4: bool[2,8] = less(%3, mask)
  %5: bool[2,8] = greater(%3, mask)
  %6: bool[2,8] = and(%4, %1)
  %7: bool[2,8] = or(%6, %5)
  %8: i64[2] = arg_max(ids, axis=1, keepdims=0, select_last_index=1)
  output keep = %7
  output last = %8
}
)",
};

Graph parse_ok(std::string_view text) {
  Expected<Graph> g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.error().message << "\nin:\n" << text;
  return g.ok() ? std::move(g).value() : Graph{};
}

// The error text of parsing `text`, which must fail.
std::string parse_error(std::string_view text) {
  Expected<Graph> g = parse_graph(text);
  EXPECT_FALSE(g.ok()) << "parsed, but should not have:\n" << text;
  return g.ok() ? std::string() : g.error().message;
}

TEST(TextFormat, CanonicalTextsRoundTrip) {
  for (const char* text : kCanonical) {
    Graph g = parse_ok(text);
    EXPECT_EQ(print(g), text);
    Graph again = parse_ok(print(g));
    EXPECT_TRUE(again == g) << text;
  }
}

TEST(TextFormat, CanonicalTextsUseEveryOperator) {
  std::set<Op> seen;
  for (const char* text : kCanonical) {
    Graph g = parse_ok(text);
    for (const Node& n : g.nodes()) seen.insert(n.op);
  }
  for (const OpInfo& info : all_ops())
    EXPECT_TRUE(seen.count(info.op)) << info.name << " appears in no canonical text";
}

TEST(TextFormat, SplitHasOneTensorPerOutput) {
  Graph g = parse_ok(kCanonical[0]);
  const GraphOutput& y = g.outputs()[0];
  EXPECT_EQ(g.node(y.ref.node).op, Op::Split);
  EXPECT_EQ(y.ref.output, 1);
}

TEST(TextFormat, QuotedNamesAndEscapesDecode) {
  Graph g = parse_ok(kCanonical[3]);
  EXPECT_EQ(g.name(), "mlp \"v2\"");
  std::set<std::string> inputs;
  for (int i : g.input_nodes()) inputs.insert(g.node(i).name);
  EXPECT_TRUE(inputs.count("tab\there"));
  EXPECT_TRUE(inputs.count("caf\xc3\xa9"));
  for (const Node& n : g.nodes()) {
    if (n.op != Op::Opaque) continue;
    EXPECT_EQ(n.attrs.str(AttrKey::payload), std::string("\0\"\\\n", 4));
    EXPECT_EQ(n.outs[1], (TensorType{DType::kI64, Shape{7}}));
    EXPECT_EQ(n.name, "%4");  // operator nodes are named after their first output
  }
}

TEST(TextFormat, FreeFormInputPrintsCanonically) {
  const char* text =
      "# a comment line\r\n"
      "\n"
      "graph g {   # trailing comment\r\n"
      "  input \"x\": f32[2, 3]\n"
      "\n"
      "  %a.1 = relu(x)   # local names are free-form\n"
      "  %b: f32[2,1] , %c = split(%a.1, sizes=[1,2], axis=-1)\n"
      "  %z = concat(%c, %b, axis=-1)\n"
      "  output \"y\" = %z\n"
      "}\n"
      "# after the graph\n";
  Graph g = parse_ok(text);
  EXPECT_EQ(print(g),
            "graph g {\n"
            "  input x: f32[2,3]\n"
            "  %0: f32[2,3] = relu(x)\n"
            "  %1: f32[2,1], %2: f32[2,2] = split(%0, axis=1, sizes=[1,2])\n"
            "  %3: f32[2,3] = concat(%2, %1, axis=1)\n"
            "  output y = %3\n"
            "}\n");
}

TEST(TextFormat, DefaultsArePrintedOnlyWhenTheyDiffer) {
  Graph explicit_defaults = parse_ok(
      "graph g {\n"
      "  input x: f32[1,1,4,4]\n"
      "  weight w: f32[1,1,1,1]\n"
      "  %0 = conv2d(x, w, act=none, groups=1, dilation=[1,1], pad=valid, stride=[1,1])\n"
      "  output y = %0\n"
      "}\n");
  EXPECT_NE(print(explicit_defaults).find("= conv2d(x, w)\n"), std::string::npos)
      << print(explicit_defaults);
}

TEST(TextFormat, EqualityCanFail) {
  std::string text = kCanonical[1];
  Graph g = parse_ok(text);
  std::string changed = text;
  changed.replace(changed.find("epsilon=0.001"), 13, "epsilon=0.002");
  EXPECT_FALSE(parse_ok(changed) == g);
  std::string renamed = text;
  renamed.replace(renamed.find("output logits"), 13, "output scores");
  EXPECT_FALSE(parse_ok(renamed) == g);
}

TEST(TextFormat, BuiltGraphRoundTrips) {
  GraphBuilder b("built");
  TensorRef x = b.input("input.1", {DType::kF32, Shape{1, 2, 5, 5}});
  auto data = std::make_shared<WeightData>();
  data->type = {DType::kF32, Shape{2, 2, 3, 3}};
  data->bytes.resize(2 * 2 * 3 * 3 * 4);
  TensorRef w = b.weight("onnx::Conv_7", data->type, data);
  Attrs conv;
  conv.set(AttrKey::pad, Padding{Padding::kExplicit, {0, 1, 2, 1}});
  Expected<TensorRef> c = b.add1(Op::Conv2d, {x, w}, conv, "conv1");
  ASSERT_TRUE(c.ok()) << c.error().message;
  Attrs pool;
  pool.set(AttrKey::kernel, std::vector<int64_t>{2, 2});
  Expected<TensorRef> p = b.add1(Op::MaxPool, {*c}, pool, "pool");
  ASSERT_TRUE(p.ok()) << p.error().message;
  b.output("out", *p);
  Expected<Graph> g = b.finish();
  ASSERT_TRUE(g.ok()) << g.error().message;
  std::string text = print(*g);
  EXPECT_EQ(text,
            "graph built {\n"
            "  input input.1: f32[1,2,5,5]\n"
            "  weight \"onnx::Conv_7\": f32[2,2,3,3]\n"
            "  %0: f32[1,2,5,5] = conv2d(input.1, \"onnx::Conv_7\", pad=[0,1,2,1])\n"
            "  %1: f32[1,2,4,4] = maxpool(%0, kernel=[2,2])\n"
            "  output out = %1\n"
            "}\n");
  // Weight values are not part of the text; equality does not look at them.
  Graph parsed = parse_ok(text);
  EXPECT_TRUE(parsed == *g);
  EXPECT_EQ(parsed.node(1).data, nullptr);
}

TEST(TextFormat, PropertyParsePrintOverRandomGraphs) {
  constexpr uint64_t kSeeds = 250;
  std::set<Op> seen;
  int operators = 0;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    Graph g = testing::random_graph(seed);
    std::string text = print(g);
    Expected<Graph> parsed = parse_graph(text, "random.tso");
    ASSERT_TRUE(parsed.ok()) << "seed " << seed << ": " << parsed.error().message << "\n" << text;
    ASSERT_TRUE(*parsed == g) << "seed " << seed << ": parse(print(g)) != g for\n" << text;
    ASSERT_EQ(print(*parsed), text) << "seed " << seed;
    for (const Node& n : g.nodes()) seen.insert(n.op);
    operators += g.num_operators();
  }
  // The generator must actually exercise the format: deep graphs over every operator.
  EXPECT_GE(operators, static_cast<int>(kSeeds) * 5);
  for (const OpInfo& info : all_ops())
    EXPECT_TRUE(seen.count(info.op)) << info.name << " never generated";
}

TEST(TextFormat, RandomGraphsAreDeterministic) {
  for (uint64_t seed : {1u, 7u, 99u}) {
    EXPECT_EQ(print(testing::random_graph(seed)), print(testing::random_graph(seed)));
  }
  EXPECT_NE(print(testing::random_graph(1)), print(testing::random_graph(2)));
}

// Examples in core/README.md, fenced as ```tso, are canonical texts too.
TEST(TextFormat, ReadmeExamplesAreCanonical) {
  std::filesystem::path readme = std::filesystem::path(__FILE__).parent_path() / "README.md";
  std::ifstream in(readme);
  ASSERT_TRUE(in) << "cannot read " << readme;
  std::stringstream all;
  all << in.rdbuf();
  std::string text = all.str();
  int examples = 0;
  for (size_t at = text.find("```tso\n"); at != std::string::npos;
       at = text.find("```tso\n", at + 1)) {
    size_t begin = at + 7, end = text.find("```", begin);
    ASSERT_NE(end, std::string::npos);
    std::string example = text.substr(begin, end - begin);
    EXPECT_EQ(print(parse_ok(example)), example);
    ++examples;
  }
  EXPECT_GE(examples, 1);
}

// --- Errors: exact location and message.

const char* const kHead = "graph g {\n  input x: f32[2,3]\n";

// A token quoted in an error is cut at 60 characters, with its length: one
// token of a hostile file can be megabytes.
TEST(TextFormatErrors, LongTokensAreQuotedInPart) {
  const std::string name(100000, 'y');
  EXPECT_EQ(parse_error(std::string(kHead) + "  " + name + " = relu(x)\n"),
            "<input>:3:3: expected a statement (input, weight, output or %name = op(...)), got '" +
                std::string(60, 'y') + "...' (100000 characters)");
  const std::string list = std::string(50000, '[') + std::string(50000, ']');
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0: f32[3,2] = transpose(x, perm=" + list +
                        ")\n  output y = %0\n}\n"),
            "<input>:3:36: attribute perm: expected a list of integers like [1,2], got '" +
                std::string(60, '[') + "...' (50001 characters)");
}

TEST(TextFormatErrors, MalformedSyntax) {
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0: f32[2,3] = relu(x\n  output y = %0\n}\n"),
            "<input>:3:24: expected ',' or ')', got end of line");
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0 relu(x)\n"),
            "<input>:3:6: expected '=' or ',', got 'relu'");
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0 = relu(x) %1\n"),
            "<input>:3:16: end of line expected after the statement, got '%1'");
  EXPECT_EQ(parse_error(std::string(kHead) + "  y = relu(x)\n"),
            "<input>:3:3: expected a statement (input, weight, output or %name = op(...)), "
            "got 'y'");
  EXPECT_EQ(parse_error("graph g\n"), "<input>:1:8: expected '{', got end of line");
  EXPECT_EQ(parse_error("\n\n  grph g {\n"), "<input>:3:3: expected 'graph NAME {', got 'grph'");
  EXPECT_EQ(parse_error(std::string(kHead) + "  output y = x\n}\n}\n"),
            "<input>:5:1: unexpected '}' after the graph's closing '}'");
  EXPECT_EQ(parse_error(std::string(kHead) + "  output y = x $\n}\n"),
            "<input>:3:16: unexpected character '$'");
  EXPECT_EQ(parse_error(std::string(kHead) + "  input \"open: f32[1]\n}\n"),
            "<input>:3:9: unterminated string");
  EXPECT_EQ(parse_error(std::string(kHead) + "  input \"bad\\q\": f32[1]\n}\n"),
            "<input>:3:9: bad string: expected a quoted string, got '\"bad\\q\"'");
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0 = relu(x, act=relu)\n"),
            "<input>:3:16: relu has no attribute 'act' (it takes: none)");
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0 = softmax(axis=1, x)\n"),
            "<input>:3:24: tensor arguments must come before attributes");
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0 = input(shape=[1])\n"),
            "<input>:3:8: graph inputs are declared as 'input NAME: TYPE', not as operators");
  EXPECT_EQ(parse_error(std::string(kHead) + "}\n"), "<input>:3:1: the graph has no outputs");
}

TEST(TextFormatErrors, FileNameLeadsTheMessage) {
  Expected<Graph> g = parse_graph("graph g {\n  output y = nope\n}\n", "models/a.tso");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().message, "models/a.tso:2:14: unknown tensor nope");
}

TEST(TextFormatErrors, UnknownOperatorSuggestsNearestNames) {
  std::string text = "graph g {\n  input x: f32[1,3,8,8]\n  weight w: f32[4,3,3,3]\n"
                     "  %0 = conv2 (x, w)\n  output y = %0\n}\n";
  EXPECT_EQ(parse_error(text), "<input>:4:8: unknown operator 'conv2'; did you mean conv2d?");
  std::string relux = parse_error(std::string(kHead) + "  %0 = relux(x)\n");
  EXPECT_EQ(relux.rfind("<input>:3:8: unknown operator 'relux'; did you mean relu", 0), 0)
      << relux;
}

TEST(TextFormatErrors, UnknownAndDuplicateNames) {
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0 = relu(%9)\n"),
            "<input>:3:13: unknown tensor %9");
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0 = relu(\"x y\")\n"),
            "<input>:3:13: unknown tensor \"x y\"");
  EXPECT_EQ(parse_error(std::string(kHead) + "  weight x: f32[1]\n"),
            "<input>:3:10: tensor x is already defined at line 2");
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0 = relu(x)\n  %1, %0 = split(x, axis=0, "
                                             "sizes=[1,1])\n"),
            "<input>:4:7: %0 is already defined at line 3");
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0, %0 = split(x, axis=0, sizes=[1,1])\n"),
            "<input>:3:7: %0 is named twice");
  EXPECT_EQ(parse_error(std::string(kHead) + "  output y = x\n  output y = x\n}\n"),
            "<input>:4:10: duplicate output y");
}

TEST(TextFormatErrors, MissingClosingBrace) {
  EXPECT_EQ(parse_error(std::string(kHead) + "  output y = x\n"),
            "<input>:4:1: missing '}' closing the graph opened at line 1");
  EXPECT_EQ(parse_error("graph g {\n  input x: f32[2]\n  output y = x"),
            "<input>:3:15: missing '}' closing the graph opened at line 1");
}

TEST(TextFormatErrors, BadTypesAndNumbers) {
  EXPECT_EQ(parse_error("graph g {\n  input x: f33[2]\n"),
            "<input>:2:12: unknown dtype 'f33' (known: f32, f16, f64, i64, i32, bool)");
  EXPECT_EQ(parse_error("graph g {\n  input x: f32[2,3x]\n"),
            "<input>:2:18: bad dimension '3x' (dimensions are non-negative integers)");
  EXPECT_EQ(parse_error("graph g {\n  input x: f32[-1]\n"),
            "<input>:2:16: bad dimension '-1' (dimensions are non-negative integers)");
  EXPECT_EQ(parse_error("graph g {\n  input x: f32[2 3]\n"),
            "<input>:2:18: expected ',' or ']', got '3'");
  EXPECT_EQ(parse_error("graph g {\n  input x: f32[2,]\n"),
            "<input>:2:18: expected a dimension, got ']'");
  EXPECT_EQ(parse_error("graph g {\n  input x: f32\n"),
            "<input>:2:15: expected '[' after the dtype, got end of line");
  EXPECT_EQ(parse_error("graph g {\n  input x: f32[99999999999999999999]\n"),
            "<input>:2:16: bad dimension '99999999999999999999' (dimensions are non-negative "
            "integers)");
  EXPECT_EQ(parse_error("graph g {\n  input x: f32[1,1,1,1,1,1,1,1,1]\n"),
            "<input>:2:32: more than 8 dimensions");
}

// The issue-17 reproduction: a count that overflows int64 (here 2^68 bytes)
// is an error naming the tensor, wherever the type appears.
TEST(TextFormatErrors, SizesThatOverflowNameTheTensor) {
  EXPECT_EQ(parse_error("graph g {\n  input x: f32[4294967296,4294967296,16]\n"),
            "<input>:2:12: input 'x': f32[4294967296,4294967296,16] does not fit in memory: its "
            "size in bytes overflows int64");
  EXPECT_EQ(parse_error("graph g {\n  weight \"w 1\": f64[1152921504606846976]\n"),
            "<input>:2:17: weight 'w 1': f64[1152921504606846976] does not fit in memory: its "
            "size in bytes overflows int64");
  // Inputs that fit, a result that does not.
  EXPECT_EQ(parse_error("graph g {\n  input x: f32[2147483648,536870912]\n"
                        "  %c = concat(x, x, axis=0)\n  output y = %c\n}\n"),
            "<input>:3:3: node '%c' (concat): concat: output 0: f32[4294967296,536870912] does "
            "not fit in memory: its size in bytes overflows int64");
  EXPECT_EQ(parse_error("graph g {\n  input x: f32[2]\n"
                        "  %o: f32[4294967296,4294967296] = opaque(x, op_type=\"Big\")\n"
                        "  output y = %o\n}\n"),
            "<input>:3:3: node '%o' (opaque) output 0: f32[4294967296,4294967296] does not fit "
            "in memory: its size in bytes overflows int64");
}

TEST(TextFormatErrors, BadAttributes) {
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0 = softmax(x, axis=one)\n"),
            "<input>:3:24: attribute axis: expected an integer, got 'one'");
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0 = softmax(x, axis=1, axis=0)\n"),
            "<input>:3:27: duplicate attribute 'axis'");
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0 = softmax(x, axs=1)\n"),
            "<input>:3:19: softmax has no attribute 'axs' (it takes: axis)");
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0 = softmax(x, axis=)\n"),
            "<input>:3:24: expected a value after '='");
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0 = transpose(x, perm=[1,0)\n"),
            "<input>:3:26: missing ']' in value");
  // Errors from GraphBuilder carry the statement's location and the node.
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0 = split(x, axis=1)\n"),
            "<input>:3:3: node '%0' (split): split: missing required attribute 'sizes'");
}

TEST(TextFormatErrors, ShapeMismatchNamesNodeAndShapes) {
  std::string msg = parse_error(
      "graph g {\n  input a: f32[2,3]\n  input b: f32[4,3]\n"
      "  %0 = relu(a)\n  %sum = add(%0, b)\n  output y = %sum\n}\n");
  EXPECT_EQ(msg.rfind("<input>:5:3: ", 0), 0) << msg;
  EXPECT_NE(msg.find("'%sum' (add)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("f32[2,3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("f32[4,3]"), std::string::npos) << msg;
}

TEST(TextFormatErrors, AnnotationMismatchNamesNodeAndBothTypes) {
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0: f32[3,2] = relu(x)\n"),
            "<input>:3:7: node '%0' (relu): %0 is annotated f32[3,2] but inferred f32[2,3]");
  EXPECT_EQ(parse_error(std::string(kHead) +
                        "  %0: f32[2,1], %1: f64[2,2] = split(x, axis=1, sizes=[1,2])\n"),
            "<input>:3:21: node '%0' (split): %1 is annotated f64[2,2] but inferred f32[2,2]");
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0, %1 = split(x, axis=1, sizes=[1,1,1])\n"),
            "<input>:3:3: node '%0' (split) has 3 outputs, but the statement names 2");
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0: f32[1], %1 = opaque(x, op_type=\"T\")\n"),
            "<input>:3:15: outputs of opaque nodes need a type: it is recorded, not inferred");
}

}  // namespace
}  // namespace tso
