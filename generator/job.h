// A generation job: the run of `generate` split into shards of first-operator
// branches, spread over the ranks of a Comm (an MPI job, or one process),
// with a checkpoint per finished shard and an optional memory budget. It
// writes exactly the rules `generate` returns (tested with 1, 2 and 3 ranks):
//
//   enumerate  rank r enumerates shards r, r+R, ... (each the part `--shard
//              s/S` would write) into checkpoint part files
//              WORK_DIR/KEY-shard-s-of-S.part; a shard whose file exists is
//              reused. KEY hashes the operator set, N, the seed, the input
//              sets, S and the generator version, so other arguments never
//              reuse a file.
//   exchange   the ranks stream their shards' records to the owner of each
//              key (a hash of the key modulo R) with all-to-all rounds, so
//              graphs with equal keys meet on one rank.
//   pair       each rank pairs, and checks shared operators and values, on
//              its own keys (stages.h).
//   renaming   one candidate per variable-renaming class: each rank keeps
//              its first of each class, sends it to the class's owner, which
//              keeps the first in the run's order.
//   check      bindable, independent parts, double re-test, on the owner.
//   implied    the survivors are gathered, ordered as one process orders
//              them and broadcast; each size's candidates are split over the
//              ranks, their decisions combined before the next size.
//   write      rank 0 names and writes the rules.
//
// Memory. The enumeration hands its records to sorted run files as it goes
// (merged into the shard's part file), so a rank holds about the records it
// owns after the exchange, in the sorted blocks they arrived in, and the
// pairing reads their merge. With a budget B (bytes per rank) records in
// memory stay within about B/2: runs of B/4 per enumeration thread at most,
// and what a rank receives past B/4 is merged into a sorted run on disk.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "generator/comm.h"
#include "generator/generator.h"

namespace tso::gen {

enum class JobStage : int {
  kStart,
  kEnumerate,
  kExchange,
  kPair,
  kRenaming,
  kCheck,
  kImplied,
  kWrite,
  kDone
};
const char* stage_name(int stage);

struct JobOptions {
  GenerateOptions gen;         // max_ops, seed, sets (not the shard fields)
  int shards = 0;              // S; 0: one per rank
  uint64_t memory_budget = 0;  // bytes per rank; 0: records stay in memory
  std::string work_dir;        // checkpoints and spilled runs
};

// Read from another thread to show progress.
struct JobProgress {
  EnumProgress enumeration;
  std::atomic<int> stage{0};
  std::atomic<uint64_t> shards_done{0}, shards{0};
};

struct JobResult {
  GenerateResult result;          // rank 0: the rules, counts and step seconds
  std::string key;                // names the checkpoint files
  int shards = 0;                 // S
  uint64_t shards_reused = 0;     // over all ranks
  uint64_t enumeration_runs = 0;  // sorted runs the enumeration wrote, over all ranks
  uint64_t spilled_runs = 0;      // runs of received records past the budget, over all ranks
  uint64_t records_owned = 0;     // records this rank received
};

// Runs this rank's part; every rank of `comm` calls it with the same
// arguments. An error is this rank's alone: the caller reports it and ends
// the job (Comm::abort), as the other ranks wait in a collective.
Expected<JobResult> run_job(const OpSet& set, const JobOptions& opt, Comm& comm,
                            JobProgress* progress);

// The checkpoint files' prefix: WORK_DIR/KEY.
std::string job_key(const OpSet& set, const JobOptions& opt, int shards);
// Removes the job's files (every rank's, on a shared work directory) and the
// directory when it is left empty; once the rules are written.
void remove_job_files(const JobOptions& opt, const std::string& key);

}  // namespace tso::gen
