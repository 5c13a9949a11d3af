// Attribute values: the text syntax parses and prints back, bad text is an
// error that says what was expected, and Attrs keeps keys sorted.
#include <gtest/gtest.h>

#include "core/attrs.h"

namespace tso {
namespace {

struct Case {
  AttrType type;
  const char* text;
};

TEST(Attrs, ValuesRoundTripThroughText) {
  const Case cases[] = {
      {AttrType::Int, "3"},           {AttrType::Int, "-7"},
      {AttrType::Ints, "[]"},         {AttrType::Ints, "[1,-2,3]"},
      {AttrType::Float, "1e-05"},     {AttrType::Float, "0.5"},
      {AttrType::Float, "inf"},       {AttrType::Float, "-inf"},
      {AttrType::Act, "none"},        {AttrType::Act, "relu"},
      {AttrType::Act, "sigmoid"},     {AttrType::Act, "tanh"},
      {AttrType::Pad, "same"},        {AttrType::Pad, "valid"},
      {AttrType::Pad, "[0,1,2,3]"},   {AttrType::Str, "\"a \\\"b\\\"\\n\\x01\""},
  };
  for (const Case& c : cases) {
    Expected<AttrValue> v = parse_attr_value(c.type, c.text);
    ASSERT_TRUE(v.ok()) << c.text << ": " << v.error().message;
    EXPECT_TRUE(attr_value_has_type(*v, c.type)) << c.text;
    EXPECT_EQ(print_attr_value(*v), c.text);
    Expected<AttrValue> again = parse_attr_value(c.type, print_attr_value(*v));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *v);
    EXPECT_EQ(hash_of(*again), hash_of(*v));
  }
}

TEST(Attrs, FloatsPrintShortestExactly) {
  Expected<AttrValue> v = parse_attr_value(AttrType::Float, "0.1");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(std::get<double>(*v), 0.1);
  EXPECT_EQ(print_attr_value(*v), "0.1");
}

TEST(Attrs, BadTextIsAnError) {
  const Case cases[] = {
      {AttrType::Int, "3.5"},      {AttrType::Int, ""},         {AttrType::Ints, "[1,2"},
      {AttrType::Ints, "1,2"},     {AttrType::Float, "x"},      {AttrType::Act, "swish"},
      {AttrType::Pad, "[1,2,3]"},  {AttrType::Pad, "full"},     {AttrType::Str, "\"open"},
      {AttrType::Str, "bare"},
  };
  for (const Case& c : cases) EXPECT_FALSE(parse_attr_value(c.type, c.text).ok()) << c.text;
}

TEST(Attrs, SetKeepsKeysSortedAndReplaces) {
  Attrs a;
  a.set(AttrKey::stride, std::vector<int64_t>{2, 2});
  a.set(AttrKey::groups, int64_t{2});
  a.set(AttrKey::stride, std::vector<int64_t>{1, 1});
  ASSERT_EQ(a.entries().size(), 2u);
  EXPECT_LT(a.entries()[0].first, a.entries()[1].first);
  EXPECT_EQ(a.ints(AttrKey::stride), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(a.i(AttrKey::groups), 2);
  EXPECT_FALSE(a.has(AttrKey::dilation));
  Attrs b;
  b.set(AttrKey::groups, int64_t{2});
  b.set(AttrKey::stride, std::vector<int64_t>{1, 1});
  EXPECT_EQ(a, b);
  EXPECT_EQ(hash_of(a), hash_of(b));
}

TEST(Attrs, EveryKeyHasANameThatFindsIt) {
  for (int i = 0; i < kNumAttrKeys; ++i) {
    const AttrInfo& info = attr_info(static_cast<AttrKey>(i));
    AttrKey k;
    ASSERT_TRUE(find_attr_key(info.name, &k)) << info.name;
    EXPECT_EQ(k, info.key);
    if (!info.default_text.empty()) {
      EXPECT_TRUE(parse_attr_value(info.type, info.default_text).ok()) << info.name;
    }
  }
}

}  // namespace
}  // namespace tso
