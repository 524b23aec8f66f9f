// The JSON form of the probe's facts and warnings, as `ballast-worker probe
// -o json` prints them (worker/probe/report.h, docs/probe.md). Pure, so the
// probe's fuzz target checks the very JSON the program prints.
//
// Every string in it is valid UTF-8 when the facts and warnings come from
// DeriveFacts and ProbeLabels (facts.h), so the strict nlohmann::json::dump
// never throws on it.
//
// Thread-safety: pure functions; safe from any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "core/probe/facts.h"

namespace ballast::probe {

// {"board": {...}, "cpu": {...}, "memory": {...}, "kernel": {...},
//  "userland": {...}, "os": {...}, "disk": {...}, "power": {...}}; a fact
// that is unknown (0 or "") is null.
nlohmann::ordered_json FactsToJson(const Facts& facts);

// [{"fact", "file", "message"}, ...] in the order given.
nlohmann::ordered_json WarningsToJson(const std::vector<Warning>& warnings);

}  // namespace ballast::probe
