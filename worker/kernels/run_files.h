// RunFiles: the files one run of an exec command shares with it (the
// contract of exec_kernel.cc): its items' values in (BALLAST_ITEMS_FILE,
// when the job lists its items by value) and its result out
// (BALLAST_RESULT_FILE, when the job declares one), in a directory of the
// run's own under TMPDIR, TMPDIR/ballast-run-<worker pid>-XXXXXX, removed
// with the RunFiles. A worker killed before it removed its runs' directories
// has them removed by the next (RemoveStaleRunDirs, factories.h).
//
// The command may have put anything where its result should be: a link is
// not followed, a FIFO or device not waited on, and a file larger than the
// job's bound not read past it.
//
// Thread-safety: one RunFiles per run; different runs' may be used at once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/balance/range.h"
#include "core/common/status.h"
#include "core/workload/user_result.h"
#include "core/workload/workload.h"

namespace ballast::kernels {

// Where the runs' directories are made: TMPDIR, else /tmp.
std::string RunDirParent();

class RunFiles {
 public:
  // The files of a run of `items` of `spec`'s job, the items' values written
  // when the job lists them; no directory when the job needs no file.
  // Unavailable when the directory or the values' file cannot be made.
  static StatusOr<std::unique_ptr<RunFiles>> Make(const workload::WorkloadSpec& spec,
                                                  balance::Range items);
  ~RunFiles();

  // The variables naming the files, for the child's environment.
  void AddEnvironment(std::vector<std::string>* env) const;
  // Before each attempt: no result left from the one before.
  void ClearResult() const;
  // After a run that exited `code`: what it handed back (nothing when the
  // job declares no result), or Invalid saying why it cannot be taken. A
  // file is kept (keepDir) when the run exited 0 or named failed items.
  StatusOr<workload::HandedBack> TakeResult(const workload::ResultSpec& spec, balance::Range items,
                                            int code) const;

 private:
  RunFiles() = default;

  std::string dir_;
  std::string items_file_;
  std::string result_file_;
};

}  // namespace ballast::kernels
