// The matmul kernel: blocks of C = A x B with OpenBLAS. This is the one file
// that calls BLAS.
//
// A and B are generated from the seed (workload::MatmulEntry) lazily: a block
// row of A or block column of B is written the first time an item needs it,
// once (std::call_once), into full row-major n x n arrays that every thread
// then reads. A worker that computes only some blocks touches only their panels;
// at most 2 n^2 doubles are held (64 MiB for n = 2048).
//
// The items of a range that share a block row are computed by one dgemm
// (block x width x n), the widest product the range allows. OpenBLAS is set to
// one thread: the worker runs one thread per core, each on its own items, and
// nested BLAS threads would only contend for the same cores.
//
// OpenBLAS is opened (dlopen) when the first matmul kernel is made, not linked:
// the bundle that carries the worker into a user's image for exec jobs
// (worker/bundle.h) holds every library the worker has mapped, and OpenBLAS
// with its Fortran runtime would be 40 of its 58 MB, copied at every exec
// pod's start for a kernel that never runs there.
#include <cblas.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "worker/kernels/factories.h"

namespace ballast::kernels {
namespace {

constexpr char kOpenBlasSoname[] = "libopenblas.so.0";

// The two OpenBLAS functions the kernel calls, or why they could not be had.
struct Blas {
  decltype(&cblas_dgemm) dgemm = nullptr;
  decltype(&openblas_set_num_threads) set_num_threads = nullptr;
  std::string error;
};

// Opens OpenBLAS once per process, set to one thread; never closed.
const Blas& OpenBlas() {
  static const Blas blas = [] {
    Blas opened;
    void* library = dlopen(kOpenBlasSoname, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      opened.error = fmt::format("matmul needs OpenBLAS ({}): {}", kOpenBlasSoname, dlerror());
      return opened;
    }
    opened.dgemm = reinterpret_cast<decltype(&cblas_dgemm)>(dlsym(library, "cblas_dgemm"));
    opened.set_num_threads = reinterpret_cast<decltype(&openblas_set_num_threads)>(
        dlsym(library, "openblas_set_num_threads"));
    if (opened.dgemm == nullptr || opened.set_num_threads == nullptr) {
      opened.error =
          fmt::format("matmul: {} lacks cblas_dgemm or openblas_set_num_threads", kOpenBlasSoname);
      return opened;
    }
    opened.set_num_threads(1);
    return opened;
  }();
  return blas;
}

using workload::MatmulSpec;
using workload::Result;
using workload::WorkloadSpec;

class MatmulKernel : public Kernel {
 public:
  explicit MatmulKernel(const WorkloadSpec& spec)
      : blas_(OpenBlas()),
        job_(spec),
        spec_(spec.matmul),
        n_(spec.matmul.n),
        block_(spec.matmul.block),
        side_(workload::MatmulBlocksPerSide(spec.matmul)),
        a_(std::make_unique_for_overwrite<double[]>(size_t{n_} * n_)),
        b_(std::make_unique_for_overwrite<double[]>(size_t{n_} * n_)),
        a_ready_(std::make_unique<std::once_flag[]>(side_)),
        b_ready_(std::make_unique<std::once_flag[]>(side_)) {}

  StatusOr<Result> Compute(balance::Range items) override {
    BALLAST_RETURN_IF_ERROR(CheckRange(job_, items));
    if (!blas_.error.empty()) return Status::Unavailable(blas_.error);
    Result total = Result::Empty(workload::WorkloadKind::kMatmul);
    std::vector<double> c;
    for (uint64_t item = items.begin; item < items.end;) {
      const workload::BlockIndex first = workload::MatmulBlock(spec_, item);
      const uint32_t blocks =
          static_cast<uint32_t>(std::min<uint64_t>(side_ - first.col, items.end - item));
      std::call_once(a_ready_[first.row], [&] { FillA(first.row); });
      for (uint32_t col = first.col; col < first.col + blocks; ++col) {
        std::call_once(b_ready_[col], [&] { FillB(col); });
      }
      const uint32_t width = blocks * block_;
      c.resize(size_t{block_} * width);
      blas_.dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(block_),
                  static_cast<int>(width), static_cast<int>(n_), 1.0,
                  &a_[size_t{first.row} * block_ * n_], static_cast<int>(n_),
                  &b_[size_t{first.col} * block_], static_cast<int>(n_), 0.0, c.data(),
                  static_cast<int>(width));
      BALLAST_ASSIGN_OR_RETURN(Result part, Checksum(first, blocks, c));
      BALLAST_RETURN_IF_ERROR(total.Merge(part));
      item += blocks;
    }
    return total;
  }

 private:
  // Entries as workload::MatmulEntry defines them (its key: A's entries
  // first, then B's, row-major), with Mix64(seed) computed once.
  void FillA(uint32_t block_row) {
    const uint64_t mixed_seed = workload::Mix64(spec_.seed);
    for (size_t i = size_t{block_row} * block_; i < size_t{block_row + 1} * block_; ++i) {
      for (size_t j = 0; j < n_; ++j) {
        a_[i * n_ + j] = workload::MatmulEntryOfKey(mixed_seed, i * n_ + j);
      }
    }
  }

  void FillB(uint32_t block_col) {
    const uint64_t mixed_seed = workload::Mix64(spec_.seed);
    const uint64_t offset = uint64_t{n_} * n_;
    for (size_t i = 0; i < n_; ++i) {
      for (size_t j = size_t{block_col} * block_; j < size_t{block_col + 1} * block_; ++j) {
        b_[i * n_ + j] = workload::MatmulEntryOfKey(mixed_seed, offset + i * n_ + j);
      }
    }
  }

  // The Result of `blocks` blocks of C from block `first` on, held row-major
  // in `c` (block_ rows, blocks * block_ columns).
  StatusOr<Result> Checksum(workload::BlockIndex first, uint32_t blocks,
                            const std::vector<double>& c) const {
    const uint32_t width = blocks * block_;
    uint64_t sum = 0;
    uint64_t checksum = 0;
    for (uint32_t r = 0; r < block_; ++r) {
      const uint32_t row = first.row * block_ + r;
      for (uint32_t k = 0; k < width; ++k) {
        const double value = c[size_t{r} * width + k];
        const auto entry = static_cast<int64_t>(value);
        if (static_cast<double>(entry) != value) {
          return Status::Unavailable(fmt::format("matmul: C({}, {}) = {} is not an integer", row,
                                                 first.col * block_ + k, value));
        }
        sum += static_cast<uint64_t>(entry);
        checksum += static_cast<uint64_t>(entry) *
                    workload::MatmulWeight(spec_, row, first.col * block_ + k);
      }
    }
    return Result::Matmul(blocks, sum, checksum);
  }

  const Blas& blas_;
  WorkloadSpec job_;
  MatmulSpec spec_;
  uint32_t n_;
  uint32_t block_;
  uint32_t side_;
  std::unique_ptr<double[]> a_;
  std::unique_ptr<double[]> b_;
  std::unique_ptr<std::once_flag[]> a_ready_;  // per block row of A
  std::unique_ptr<std::once_flag[]> b_ready_;  // per block column of B
};

}  // namespace

std::unique_ptr<Kernel> MakeMatmulKernel(const WorkloadSpec& spec) {
  return std::make_unique<MatmulKernel>(spec);
}

}  // namespace ballast::kernels
