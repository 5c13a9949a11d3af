// Plan-time choices (measure.h) remembered across processes. A plan chooses
// between implementations of an operator by timing them (a 3x3 convolution
// has five candidates); with a choices file, the first plan of a shape on
// this machine times them and every later plan, in any process, reads the
// choice. So `tso run`, the profiler timing one operator for the optimizer
// and the optimizer's speed check all run the implementation one
// measurement picked, and planning CSRNet at batch 16 does not time its
// convolutions' candidates again in every process. Internal to runtime/cpu.
//
// The file (JSON) belongs to one device string (device_description: the
// machine, threads, library and ISA) and holds, per choice key, the number
// of candidates and the index chosen; a key whose candidates changed in
// number is timed again. Each new choice is written at once, atomically,
// merged with what other processes wrote meanwhile.
#pragma once

#include <optional>
#include <string>

#include "core/error.h"

namespace tso::cpu {

// Loads `path` for this process (once per path; a missing file holds no
// choice). A file that is not a choices file, or that belongs to another
// device, is an error naming it.
Status load_plan_choices(const std::string& path, const std::string& device);

// The index remembered under `key` in the loaded `path`, if it was chosen
// among `candidates`.
std::optional<int> remembered_choice(const std::string& path, const std::string& key,
                                     int candidates);

// Remembers `index` under `key` and writes the file. A file that cannot be
// written keeps the choice for this process only.
void remember_choice(const std::string& path, const std::string& key, int candidates, int index);

}  // namespace tso::cpu
