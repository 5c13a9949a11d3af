// MPI collectives and status messages for a generation job (see mpi_comm.h).
#include "generator/mpi_comm.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <mutex>
#include <numeric>
#include <thread>

#include "core/atomic_file.h"

namespace tso::gen {

namespace {

constexpr int kStatusTag = 7;
// The most bytes one rank passes to or takes from a peer in one round.
constexpr uint64_t kMaxPiece = INT_MAX / 2;

bool fits_int(std::span<const uint64_t> counts) {
  return std::accumulate(counts.begin(), counts.end(), uint64_t{0}) <= INT_MAX;
}

std::vector<int> ints(std::span<const uint64_t> v) { return {v.begin(), v.end()}; }

std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> d(counts.size());
  std::exclusive_scan(counts.begin(), counts.end(), d.begin(), 0);
  return d;
}

}  // namespace

struct MpiComm::State {
  MPI_Comm world = MPI_COMM_NULL;
  MPI_Comm statuses = MPI_COMM_NULL;  // status messages only
  int rank = 0, size = 1;
  bool threads = false;  // MPI_THREAD_MULTIPLE
  std::mutex m;
  std::vector<RankStatus> latest;  // rank 0: by rank
  std::vector<bool> posted;
};

std::unique_ptr<MpiComm> MpiComm::init() {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  auto s = std::make_unique<State>();
  MPI_Comm_dup(MPI_COMM_WORLD, &s->world);
  MPI_Comm_dup(MPI_COMM_WORLD, &s->statuses);
  MPI_Comm_rank(s->world, &s->rank);
  MPI_Comm_size(s->world, &s->size);
  s->threads = provided >= MPI_THREAD_MULTIPLE;
  s->latest.resize(s->size);
  s->posted.resize(s->size);
  return std::unique_ptr<MpiComm>(new MpiComm(std::move(s)));
}

MpiComm::MpiComm(std::unique_ptr<State> state) : s_(std::move(state)) {}

MpiComm::~MpiComm() {
  MPI_Comm_free(&s_->statuses);
  MPI_Comm_free(&s_->world);
  MPI_Finalize();
}

int MpiComm::rank() const { return s_->rank; }
int MpiComm::size() const { return s_->size; }

std::vector<char> MpiComm::all_to_all(std::span<const char> send,
                                      std::span<const uint64_t> counts) {
  const int n = s_->size;
  std::vector<uint64_t> sc(counts.begin(), counts.end()), rc(n);
  MPI_Alltoall(sc.data(), 1, MPI_UINT64_T, rc.data(), 1, MPI_UINT64_T, s_->world);
  std::vector<char> out(std::accumulate(rc.begin(), rc.end(), uint64_t{0}));
  int small = fits_int(sc) && fits_int(rc);
  MPI_Allreduce(MPI_IN_PLACE, &small, 1, MPI_INT, MPI_MIN, s_->world);
  if (small) {
    const std::vector<int> si = ints(sc), ri = ints(rc);
    MPI_Alltoallv(send.data(), si.data(), displacements(si).data(), MPI_BYTE, out.data(), ri.data(),
                  displacements(ri).data(), MPI_BYTE, s_->world);
    return out;
  }
  // Rounds of at most kMaxPiece / n bytes per peer, through packed buffers.
  const uint64_t piece = kMaxPiece / n;
  std::vector<uint64_t> soff(n), roff(n);
  std::exclusive_scan(sc.begin(), sc.end(), soff.begin(), uint64_t{0});
  std::exclusive_scan(rc.begin(), rc.end(), roff.begin(), uint64_t{0});
  uint64_t rounds = 0;
  for (int r = 0; r < n; ++r)
    rounds = std::max({rounds, (sc[r] + piece - 1) / piece, (rc[r] + piece - 1) / piece});
  MPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_UINT64_T, MPI_MAX, s_->world);
  std::vector<char> sbuf, rbuf;
  std::vector<int> si(n), ri(n);
  for (uint64_t k = 0; k < rounds; ++k) {
    auto part = [&](uint64_t total) {
      return static_cast<int>(std::min(piece, total - std::min(total, k * piece)));
    };
    sbuf.clear();
    for (int r = 0; r < n; ++r) {
      si[r] = part(sc[r]);
      ri[r] = part(rc[r]);
      const char* from = send.data() + soff[r] + k * piece;
      sbuf.insert(sbuf.end(), from, from + si[r]);
    }
    const std::vector<int> rd = displacements(ri);
    rbuf.resize(std::accumulate(ri.begin(), ri.end(), size_t{0}));
    MPI_Alltoallv(sbuf.data(), si.data(), displacements(si).data(), MPI_BYTE, rbuf.data(),
                  ri.data(), rd.data(), MPI_BYTE, s_->world);
    for (int r = 0; r < n; ++r)
      std::copy_n(rbuf.data() + rd[r], ri[r], out.data() + roff[r] + k * piece);
  }
  return out;
}

std::vector<char> MpiComm::gather(std::span<const char> bytes, int root) {
  const int n = s_->size;
  uint64_t mine = bytes.size();
  std::vector<uint64_t> counts(n);
  MPI_Gather(&mine, 1, MPI_UINT64_T, counts.data(), 1, MPI_UINT64_T, root, s_->world);
  int small = s_->rank != root || fits_int(counts);
  MPI_Bcast(&small, 1, MPI_INT, root, s_->world);
  std::vector<char> out;
  if (s_->rank == root) out.resize(std::accumulate(counts.begin(), counts.end(), uint64_t{0}));
  if (small) {
    const std::vector<int> ci = ints(counts);
    MPI_Gatherv(bytes.data(), static_cast<int>(mine), MPI_BYTE, out.data(), ci.data(),
                displacements(ci).data(), MPI_BYTE, root, s_->world);
    return out;
  }
  // Point to point, a piece at a time.
  if (s_->rank != root) {
    for (uint64_t at = 0; at < mine; at += kMaxPiece)
      MPI_Send(bytes.data() + at, static_cast<int>(std::min(kMaxPiece, mine - at)), MPI_BYTE, root,
               0, s_->world);
    return out;
  }
  uint64_t off = 0;
  for (int r = 0; r < n; ++r) {
    if (r == root)
      std::copy(bytes.begin(), bytes.end(), out.data() + off);
    else
      for (uint64_t at = 0; at < counts[r]; at += kMaxPiece)
        MPI_Recv(out.data() + off + at, static_cast<int>(std::min(kMaxPiece, counts[r] - at)),
                 MPI_BYTE, r, 0, s_->world, MPI_STATUS_IGNORE);
    off += counts[r];
  }
  return out;
}

void MpiComm::broadcast(std::vector<char>* bytes, int root) {
  uint64_t n = bytes->size();
  MPI_Bcast(&n, 1, MPI_UINT64_T, root, s_->world);
  bytes->resize(n);
  for (uint64_t at = 0; at < n; at += kMaxPiece)
    MPI_Bcast(bytes->data() + at, static_cast<int>(std::min(kMaxPiece, n - at)), MPI_BYTE, root,
              s_->world);
}

void MpiComm::sum(std::span<uint64_t> values) {
  MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_UINT64_T, MPI_SUM,
                s_->world);
}

void MpiComm::max(std::span<uint8_t> values) {
  for (size_t at = 0; at < values.size(); at += kMaxPiece)
    MPI_Allreduce(MPI_IN_PLACE, values.data() + at,
                  static_cast<int>(std::min<size_t>(kMaxPiece, values.size() - at)), MPI_UINT8_T,
                  MPI_MAX, s_->world);
}

void MpiComm::post(const RankStatus& status) {
  RankStatus st = status;
  st.rank = s_->rank;
  if (s_->rank == 0) {
    std::lock_guard<std::mutex> l(s_->m);
    s_->latest[0] = st;
    s_->posted[0] = true;
    return;
  }
  if (s_->threads) MPI_Send(&st, sizeof st, MPI_BYTE, 0, kStatusTag, s_->statuses);
}

std::vector<RankStatus> MpiComm::statuses() {
  std::lock_guard<std::mutex> l(s_->m);
  if (s_->threads) {
    int flag = 1;
    while (true) {
      MPI_Status probe;
      MPI_Iprobe(MPI_ANY_SOURCE, kStatusTag, s_->statuses, &flag, &probe);
      if (!flag) break;
      RankStatus st;
      MPI_Recv(&st, sizeof st, MPI_BYTE, probe.MPI_SOURCE, kStatusTag, s_->statuses,
               MPI_STATUS_IGNORE);
      s_->latest[probe.MPI_SOURCE] = st;
      s_->posted[probe.MPI_SOURCE] = true;
    }
  }
  std::vector<RankStatus> out;
  for (int r = 0; r < s_->size; ++r)
    if (s_->posted[r]) out.push_back(s_->latest[r]);
  return out;
}

std::vector<RankStatus> MpiComm::last_statuses() {
  // Without status messages only rank 0's own is there to wait for.
  const size_t ranks = s_->threads ? s_->size : 1;
  while (true) {
    std::vector<RankStatus> st = statuses();
    if (st.size() == ranks &&
        std::all_of(st.begin(), st.end(), [](const RankStatus& x) { return x.done; }))
      return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void MpiComm::abort(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  remove_temporaries();
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace tso::gen
