// Where `tso optimize` finds its rule files and device description when the
// command line does not say: the source tree this build came from.
#pragma once

#include <string>
#include <vector>

namespace tso::opt {

std::string default_rules_dir();               // <source>/substitutions
std::vector<std::string> default_rule_files();  // its *.rules, sorted
std::string default_device_path();             // <source>/optimizer/devices/h100.json
// The device file calibrated on tso's CPU runtime (tso calibrate):
// <source>/optimizer/devices/cpu-epyc-2c.json.
std::string cpu_device_path();

}  // namespace tso::opt
