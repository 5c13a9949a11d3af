// Internal to substitutions/: pieces shared by the printer, the parser and
// instantiation.
#pragma once

#include <string>
#include <vector>

#include "substitutions/rules.h"

namespace tso::rules_internal {

// What made an instantiation fail, so the parser can point at the statement.
struct Failure {
  enum class What : uint8_t { kNone, kWhere, kNode, kOutputs } what = What::kNone;
  int index = -1;  // the condition or node
};

Expected<Graph> instantiate_side(const Rule& rule, RuleSideKind side, const RuleBindings& bindings,
                                 Failure* failure);

// The local names (%0, %1, ...) of every node output of a side, in order.
std::vector<std::vector<std::string>> local_names(const RuleSide& side);
std::string ref_text(const Rule& rule, const std::vector<std::vector<std::string>>& locals,
                     const RuleRef& r);
// One statement of a side in canonical text, without indentation.
std::string node_text(const Rule& rule, const RuleSide& side, int index);

// Whether a concrete attribute value equals the attribute's default.
bool is_default_value(AttrKey key, const AttrValue& v);
// The default of an attribute; false when it is required.
bool default_value(AttrKey key, AttrValue* out);

}  // namespace tso::rules_internal
