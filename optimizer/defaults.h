// Where `tso optimize` finds its rule files and device description when the
// command line does not say: the source tree this build came from.
#pragma once

#include <string>
#include <vector>

namespace tso::opt {

std::string default_rules_dir();               // <source>/substitutions
std::vector<std::string> default_rule_files();  // its *.rules, sorted
std::string default_device_path();             // <source>/optimizer/devices/h100.json

}  // namespace tso::opt
