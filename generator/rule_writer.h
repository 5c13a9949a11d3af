// Internal to generator/: turns an oriented candidate into a rule of the text
// format (substitutions/rules.h), with attribute values that derive from
// input shapes written as shape expressions over the rule's variables, so
// the rule applies at other shapes too.
#pragma once

#include <string>

#include "generator/candidates.h"
#include "substitutions/rules.h"

namespace tso::gen {

Rule make_rule(KindTable& table, const Candidate& c, std::string name, const RuleOrigin& origin);

}  // namespace tso::gen
