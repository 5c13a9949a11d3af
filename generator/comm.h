// The communication a generation job (job.h) runs over: the ranks of an MPI
// job (generator/mpi_comm.h, built when Open MPI is found) or one process
// alone (LocalComm). The collectives are called by every rank in the same
// order; statuses are posted from any thread, for rank 0 to show progress.
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace tso::gen {

// What a rank is doing, as rank 0 shows it.
struct RankStatus {
  int rank = 0;
  int stage = 0;        // a job stage (job.h)
  uint64_t graphs = 0;  // graphs enumerated so far by this rank
  uint64_t shards_done = 0, shards = 0;
  double rss_mib = 0, peak_rss_mib = 0;
  bool done = false;  // the last status of the rank
};

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // `send` holds the bytes for rank 0, then rank 1, ... (`counts[r]` each);
  // returns the bytes every rank sent here, in rank order.
  virtual std::vector<char> all_to_all(std::span<const char> send,
                                       std::span<const uint64_t> counts) = 0;
  // On `root`: every rank's bytes, in rank order; elsewhere empty.
  virtual std::vector<char> gather(std::span<const char> bytes, int root) = 0;
  // Root's bytes on every rank.
  virtual void broadcast(std::vector<char>* bytes, int root) = 0;
  // Element by element over the ranks, the result on every rank.
  virtual void sum(std::span<uint64_t> values) = 0;
  virtual void max(std::span<uint8_t> values) = 0;

  // Sends this rank's status towards rank 0 (any thread).
  virtual void post(const RankStatus& status) = 0;
  // On rank 0: the latest status of each rank that posted one (any thread).
  virtual std::vector<RankStatus> statuses() = 0;
  // On rank 0, after its own last post: every rank's last status (`done`),
  // waiting for them; each rank posts one before it ends, and rank 0 takes
  // them all before the Comm goes away.
  virtual std::vector<RankStatus> last_statuses() = 0;
  // Ends the whole job at once with exit code `code`.
  [[noreturn]] virtual void abort(int code) = 0;
};

// One process: rank 0 of 1.
class LocalComm : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<char> all_to_all(std::span<const char> send,
                               std::span<const uint64_t> counts) override;
  std::vector<char> gather(std::span<const char> bytes, int root) override;
  void broadcast(std::vector<char>* bytes, int root) override {}
  void sum(std::span<uint64_t> values) override {}
  void max(std::span<uint8_t> values) override {}
  void post(const RankStatus& status) override;
  std::vector<RankStatus> statuses() override;
  std::vector<RankStatus> last_statuses() override { return statuses(); }
  [[noreturn]] void abort(int code) override;

 private:
  std::mutex m_;
  std::vector<RankStatus> latest_;
};

}  // namespace tso::gen
