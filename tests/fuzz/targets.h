// The fuzz targets: one function per reader of text from outside, each
// taking any bytes at all. They are built twice: into libFuzzer programs with
// clang, ASan and UBSan (BALLAST_FUZZ=ON, fuzzer.cc), and into the normal
// suite's fuzz_replay_test, which feeds them every kept input with gcc.
//
// A target returns normally for every input; a crash, a sanitizer report, a
// hang or an allocation past libFuzzer's limits is a finding. Each target
// also checks the output the program makes of what parses: JSON it writes
// (the probe's report, protocol messages, workloads) dumps the strict way
// (no type_error.316: every string UTF-8) and parses back equal; a profile
// formats to a document that reads back; speeds are physical speed ratios;
// the weights' warnings are bounded UTF-8 messages.
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>
#include <vector>

namespace ballast::fuzz {

using Target = void (*)(std::string_view text);

struct NamedTarget {
  const char* name;  // as in tests/fuzz/corpus/<name> and fuzz_<name>
  Target run;
};

// The job file of `ballast run` (core/job ParseJob).
void JobFile(std::string_view text);
// The cluster file of emulated nodes (core/job ParseCluster).
void ClusterFile(std::string_view text);
// A simulator scenario (core/sim ParseScenario).
void ScenarioFile(std::string_view text);
// A WeightProfile document (core/fuzzy ParseProfile); an error names the file.
void ProfileFile(std::string_view text);
// Node facts: `nodes:` lists, `kubectl get nodes -o yaml`, one Node (ParseNodes),
// and the node probe's marks read from the same text (ProbeLabelsOfNodes); an
// error names the file.
void NodesFile(std::string_view text);
// A protocol body (core/protocol): one text read as a report, a reply, a job
// description and a refusal, as either side of the wire may receive it.
void ProtocolBody(std::string_view text);
// The coordinator's answer of a job's progress (core/protocol/progress.h
// ParseJobProgress), which `kubectl ballast top` reads through the API
// server: what reads is within its bounds and travels as JSON back equal.
void ProgressAnswer(std::string_view text);
// The history file of `ballast run --history` (history::ReadHistoryFile):
// the store's form and the earlier form it converts.
void HistoryFileText(std::string_view text);
// The speeds file of `ballast weights --fit` (ParseSpeeds).
void SpeedsFile(std::string_view text);
// A WeightedJob or WeightProfile object as the API server hands it over
// (JSON): the operator's typed readers of its spec and of the profile, and
// the reader of node facts.
void CrdObject(std::string_view text);
// ParseBoundedJson itself: what it accepts must serialise and parse back equal.
void BoundedJson(std::string_view text);

// The node probe's files (core/probe): the text fed to every parser, then
// given as every file of a snapshot at once, and split at NUL bytes into
// successive files; the facts derived and labelled, every label value valid,
// and the JSON `ballast-worker probe -o json` prints of them valid.
void ProbeFile(std::string_view text);
// The history of measured speeds (core/history): the text read as Prometheus's
// answer to the history query and as the operator's store; a store that
// reads must write a text that reads back and writes the same.
void SpeedStoreText(std::string_view text);
// A list of items one a line (core/workload ParseItemLines), in both
// formats: what reads attaches to an exec workload that travels as JSON and
// reads back equal; every error names the list.
void ItemListText(std::string_view text);
// A run's result file (core/workload ReadResultFile) under a declaration of
// every rule: what reads merges, travels as JSON, reads back equal and passes
// the coordinator's check; every error names the file and is bounded.
void ResultFileText(std::string_view text);

// The worker's token file (worker/token_file.h ParseTokenFile): a token
// that reads is one word of printable bytes from the text; every error is
// bounded.
void TokenFileText(std::string_view text);

// The bounded reader of a file a user names (fileio::ReadBoundedFile): the
// text as a regular file (in memory), read under bounds below, at and above
// its size and one the text's first byte picks; a read within the bound is
// the text exactly, one past it an Invalid naming the file and the bound.
void BoundedFileText(std::string_view text);

// Every target above, by name.
const std::vector<NamedTarget>& AllTargets();

}  // namespace ballast::fuzz
