// The ranks of an MPI job (Open MPI) as a Comm (comm.h): the collectives are
// MPI's (MPI_Alltoallv, MPI_Gatherv, MPI_Bcast, MPI_Allreduce), split into
// rounds where a buffer passes MPI's int counts; statuses travel as small
// messages on a communicator of their own, so a progress thread can post and
// poll them while the main thread is in a collective (MPI_THREAD_MULTIPLE;
// without it each rank shows only its own). Built only when CMake finds MPI
// (TSO_MPI); the generator library itself never links MPI.
#pragma once

#include <memory>

#include "core/error.h"
#include "generator/comm.h"

namespace tso::gen {

class MpiComm : public Comm {
 public:
  // MPI_Init_thread; once per process. MPI_Finalize when it goes away.
  static std::unique_ptr<MpiComm> init();
  ~MpiComm() override;

  int rank() const override;
  int size() const override;
  std::vector<char> all_to_all(std::span<const char> send,
                               std::span<const uint64_t> counts) override;
  std::vector<char> gather(std::span<const char> bytes, int root) override;
  void broadcast(std::vector<char>* bytes, int root) override;
  void sum(std::span<uint64_t> values) override;
  void max(std::span<uint8_t> values) override;
  void post(const RankStatus& status) override;
  std::vector<RankStatus> statuses() override;
  std::vector<RankStatus> last_statuses() override;
  [[noreturn]] void abort(int code) override;

  struct State;

 private:
  explicit MpiComm(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

}  // namespace tso::gen
