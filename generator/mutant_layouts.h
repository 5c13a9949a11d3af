// Internal to generator/: mutants that run the source program in another
// layout. The program's data input is encoded (stacked, tiled, interleaved
// or padded), its nodes run in that layout with adapted attributes, and each
// output is decoded back. The families' build functions are listed in
// mutant_families.h.
#pragma once

#include <vector>

#include "generator/mutant_families.h"

namespace tso::gen {

std::vector<Rule> stack_mutants(const SourceProgram& src);
std::vector<Rule> tile_mutants(const SourceProgram& src);
std::vector<Rule> interleave_mutants(const SourceProgram& src);
// The interleaved layout of src's dilated convolution decoded and encoded
// again (b2s then s2b), which is the identity.
std::vector<Rule> roundtrip_mutants(const SourceProgram& src);
std::vector<Rule> pad_even_mutants(const SourceProgram& src);
std::vector<Rule> merge_mutants(const SourceProgram& src);

}  // namespace tso::gen
