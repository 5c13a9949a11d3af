// `tso generate` as a job (generator/job.h): one rank per process under
// mpirun, or one process alone with --memory-budget, --shards or --work-dir.
#pragma once

#include <cstdint>
#include <string>

#include "generator/generator.h"

namespace tso::cli {

struct GenerateJobFlags {
  int max_ops = 3;
  std::string ops;
  uint64_t seed = 1;
  int threads = 0;
  std::string out;
  std::string memory_budget;  // bytes, with an optional K, M, G or T suffix (powers of 1024)
  int shards = 0;
  std::string work_dir;  // FILE.work by default
};

// Whether mpirun (Open MPI, or a PMI launcher) started this process.
bool launched_by_mpirun();
// "2G", "512M", "1000000"; false on anything else.
bool parse_bytes(const std::string& text, uint64_t* bytes);
int run_generate_job(const GenerateJobFlags& f);

// The stage counts as `tso generate` prints them (generate.cc).
void print_counts(const std::string& ops, const gen::GenerateCounts& n, size_t written);

}  // namespace tso::cli
