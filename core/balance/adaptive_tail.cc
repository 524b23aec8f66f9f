#include "core/balance/adaptive_tail.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace ballast::balance {
namespace {

constexpr double kProbeReports = 4;  // length of a probe lease, in report floors
// A steal looks at most this many workers, from the last predicted to finish.
constexpr int kStealVictims = 4;

}  // namespace

AdaptiveTail::AdaptiveTail(const AdaptiveOptions& options)
    : AdaptiveForecast(options.min_report_seconds), options_(options) {}

void AdaptiveTail::StartTail() {
  backed_up_.assign(worker_count(), false);
  copy_.assign(worker_count(), false);
  partner_.assign(worker_count(), std::nullopt);
  unplanned_cost_.assign(worker_count(), 0);
}

void AdaptiveTail::JoinTail() {
  backed_up_.push_back(false);
  copy_.push_back(false);
  partner_.push_back(std::nullopt);
  unplanned_cost_.push_back(0);
}

std::optional<Reply> AdaptiveTail::FromTail(WorkerId thief, double now) {
  if (auto stolen = Steal(thief, now, Far::kSized)) return stolen;
  if (options_.backup) {
    if (auto copy = Backup(thief, now)) return copy;
  }
  return Steal(thief, now, Far::kWholeItem);
}

double AdaptiveTail::SlowStartCap(WorkerId worker, double now) const {
  if (!options_.slow_start || !job().inputs_cross_links) return kNever;
  return std::max(kProbeReports * ReportFloor(now) * Speed(worker), 2 * unplanned_cost_[worker]);
}

Reply AdaptiveTail::GrantTimed(WorkerId worker, Range range, double now) {
  backed_up_[worker] = copy_[worker] = false;
  const Reply reply = Grant(worker, range, now, Cadence(worker, cost().Cost(range), now));
  Predict(worker, now);
  return reply;
}

Reply AdaptiveTail::GrantUnplanned(WorkerId worker, Range range, double now) {
  unplanned_cost_[worker] = cost().Cost(range);
  return GrantTimed(worker, range, now);
}

Range AdaptiveTail::SharedLease(WorkerId id) const {
  const auto other = partner_[id];
  if (!other || !Alive(*other)) return {};
  const Range mine = state(id).lease;
  const Range theirs = state(*other).lease;
  return {std::max(mine.begin, theirs.begin), std::min(mine.end, theirs.end)};
}

// The victim: the worker predicted to finish last (the thief holds no
// lease, so it is not among them). When it has nothing to give (one
// indivisible item under way, or a lease computed twice already), the next
// latest, down to kStealVictims of them: an idle thief must not wait out a
// fast worker's last large item beside a slow one that still holds many
// small items, whose prediction may be the one that is wrong.
std::optional<Reply> AdaptiveTail::Steal(WorkerId thief, double now, Far far) {
  auto candidate = finish_times().Latest(now);
  if (!candidate) Note(std::nullopt, "no worker is predicted to finish later");
  for (int tried = 0; candidate && tried < kStealVictims; ++tried) {
    const auto [victim, finish] = *candidate;
    if (victim == thief) {
      // The thief holds no lease: nothing of its own to note.
    } else if (!Busy(victim)) {
      Note(victim, "not computing");
    } else if (Doubled(victim)) {
      Note(victim, "its lease and a backup copy are computed twice already");
    } else if (auto stolen = StealFrom(thief, victim, finish, now, far)) {
      return stolen;
    }
    candidate = finish_times().Preceding(victim, now);
  }
  return std::nullopt;
}

// A steal from `victim`, predicted to finish at `latest`. A backed-up lease
// and its copy are computed twice already (Doubled); cutting either would
// only bring in a third worker.
std::optional<Reply> AdaptiveTail::StealFrom(WorkerId thief, WorkerId victim, double latest,
                                             double now, Far far) {
  const WorkerState& v = state(victim);
  // The victim learns its new end with the reply to its next report. When
  // that comes too late for any steal (a slow victim with a long cadence,
  // in the tail), it is signalled to report at its next item boundary,
  // about a report floor from now, and the steal is sized for that.
  if (reserved_cost(victim) > 0) return StealReserved(thief, victim, latest, now);
  const double next_report = std::max(now, v.last_contact + v.report_every_s);
  if (auto stolen = StealAt(thief, victim, latest, next_report, now, far)) return stolen;
  const double signalled = now + ReportFloor(now);
  if (signalled >= next_report) return std::nullopt;
  auto stolen = StealAt(thief, victim, latest, signalled, now, far);
  if (stolen) Signal(victim);
  return stolen;
}

// The backup of step 5: the thief computes a copy of the whole unfinished
// rest of the last worker's lease, from its last reported position, when it
// can finish it before that worker is predicted to. The victim is not cut
// and not told: if its prediction holds, it finishes first and the copy
// is dropped; if it is paused (a CPU quota's throttled period, a step
// held up), the copy ends the job. Only the thief's idle time is spent.
std::optional<Reply> AdaptiveTail::Backup(WorkerId thief, double now) {
  const auto last = finish_times().Latest(now);
  if (!last || last->first == thief || !Busy(last->first)) {
    Note(std::nullopt, "backup: no worker computes");
    return std::nullopt;
  }
  const auto [victim, latest] = *last;
  if (!job().repeatable) {
    Note(std::nullopt, "backup: the job's items must not run twice");
    return std::nullopt;
  }
  if (Doubled(victim) || reserved_cost(victim) > 0) {
    Note(victim, "backup: its lease has a copy already, or it has work set aside");
    return std::nullopt;
  }
  const Range copy = FirstOpenPart(Unfinished(victim));
  if (copy.empty()) {
    Note(victim, "backup: nothing of its lease is unfinished");
    return std::nullopt;
  }
  if (!WorthStealing(thief, copy, latest, now)) {
    NoteNotWorth(thief, victim, "backup", copy, latest, now);
    return std::nullopt;
  }
  mutable_stats().backups++;
  const Reply reply = GrantStolen(thief, copy, now);
  backed_up_[victim] = true;
  copy_[thief] = true;
  partner_[victim] = thief;
  partner_[thief] = victim;
  return reply;
}

// Takes work the victim has set aside after its lease, sized so both
// finish together; the victim needs not learn of it before it asks.
std::optional<Reply> AdaptiveTail::StealReserved(WorkerId thief, WorkerId victim, double latest,
                                                 double now) {
  const double amount = std::min((latest - now) / (1.0 / Speed(thief) + 1.0 / Speed(victim)),
                                 SlowStartCap(thief, now));
  const Range last = amount > 0 ? LastOpenPart(reserved(victim).Last()) : Range{};
  if (last.empty()) {
    Note(victim, fmt::format("set aside: nothing to share by its end at {:.2f} s", latest));
    return std::nullopt;
  }
  const Range stolen = FarEnd(last, amount);
  if (!WorthStealing(thief, stolen, latest, now)) {
    NoteNotWorth(thief, victim, "set aside", stolen, latest, now);
    return std::nullopt;
  }
  Unreserve(victim, stolen);
  Predict(victim, now);
  return GrantStolen(thief, stolen, now);
}

bool AdaptiveTail::WorthStealing(WorkerId thief, Range stolen, double latest, double now) const {
  return ThiefFinish(thief, stolen, now) + speeds().estimate(thief).overhead_s < latest;
}

double AdaptiveTail::ThiefFinish(WorkerId thief, Range stolen, double now) const {
  return now + speeds().estimate(thief).overhead_s + cost().Cost(stolen) / Speed(thief);
}

Reply AdaptiveTail::GrantStolen(WorkerId thief, Range stolen, double now) {
  mutable_stats().steals++;
  mutable_stats().moved_items += stolen.size();
  return GrantUnplanned(thief, stolen, now);
}

Range AdaptiveTail::FarEnd(Range range, double amount) const {
  return {std::min(cost().Retreat(range.end, range.begin, amount), range.end - 1), range.end};
}

// Cuts the far end of the victim's lease for the thief, sized so both
// finish together when the victim learns its new end at `learns`; nullopt
// when nothing worth moving is left by then.
std::optional<Reply> AdaptiveTail::StealAt(WorkerId thief, WorkerId victim, double latest,
                                           double learns, double now, Far far) {
  const double v_speed = Speed(victim);
  const double t_speed = Speed(thief);
  const Range left = Unfinished(victim);
  // Named only when noted: a steal that succeeds formats nothing.
  const auto what = [&] {
    return fmt::format("{} (learning at {:.2f} s)", far == Far::kSized ? "sized" : "whole item",
                       learns);
  };
  const uint64_t safe = PastReach(thief, victim, learns);
  if (safe >= left.end) {
    if (StopFloor(victim) >= left.end) {
      Note(victim, fmt::format("{}: its run under way holds the rest of its lease {}", what(),
                               left.ToString()));
    } else {
      Note(victim, fmt::format("{}: it may be in its last item {} by then", what(),
                               Range{left.end - 1, left.end}.ToString()));
    }
    return std::nullopt;
  }
  const double rest = cost().Cost({safe, left.end});
  double amount = (rest / v_speed + (learns - now)) / (1.0 / t_speed + 1.0 / v_speed);
  // Slow start caps the steal, but never below the last item: a probe
  // shorter than one item (a thief that joined mid-job, whose report
  // floor is short beside an item) would steal nothing, ever.
  const double last_item = cost().Cost({left.end - 1, left.end});
  amount = std::min({amount, rest, std::max(SlowStartCap(thief, now), last_item)});
  // Sized for both to finish together, the far end may be worth less than
  // its last item, which cannot be split: Far::kWholeItem then takes that
  // item whole when the thief still finishes it before the victim would
  // have (WorthStealing, below), which moves the job's end earlier though
  // not to a common one (on real nodes an idle Pi 4B was told to wait 8 s
  // beside the other's last archive, worth more than the amount).
  uint64_t cut = cost().Retreat(left.end, safe, amount);
  if (far == Far::kWholeItem) cut = std::min(cut, left.end - 1);
  // The victim may already have finished the start of it (it overshot an
  // earlier cut before learning of it): the thief starts after those.
  const Range stolen = SkipFinished({cut, left.end});
  if (stolen.empty()) {
    Note(victim,
         fmt::format("{}: it finished {} already", what(), Range{cut, left.end}.ToString()));
    return std::nullopt;
  }
  if (!WorthStealing(thief, stolen, latest, now)) {
    NoteNotWorth(thief, victim, what(), stolen, latest, now);
    return std::nullopt;
  }
  Cut(victim, cut);
  Predict(victim, now);
  return GrantStolen(thief, stolen, now);
}

uint64_t AdaptiveTail::PastReach(WorkerId thief, WorkerId victim, double learns) const {
  const double v_speed = Speed(victim);
  const double t_speed = Speed(thief);
  const Range left = Unfinished(victim);
  // Where the victim may be when it learns of the cut: as far as its speed
  // says, and further by as much as it has run ahead of its predictions,
  // the lead weighed by what a wrong cut costs. A cut the victim has not
  // reached leaves it items at its speed; one it has passed has the thief
  // compute again what the victim did, at the thief's. So the lead counts
  // fully for a victim at least as fast as the thief, and in proportion
  // 2 v / (v + t) for a slower one: a slow victim beside a fast thief is
  // better cut short than left items it may not reach.
  const double lead =
      speeds().estimate(victim).lead * std::min(1.0, 2 * v_speed / (v_speed + t_speed));
  const double travel = v_speed * (1 + lead) * (learns - state(victim).last_contact);
  const uint64_t reached = cost().Advance(left.begin, left.end, travel);
  // The item it may have begun, and no nearer than the end of its run under
  // way, which cannot stop before it.
  return std::max(std::min(left.end, reached + 1), StopFloor(victim));
}

void AdaptiveTail::Note(std::optional<WorkerId> victim, std::string why) {
  wait_notes_.push_back({victim, std::move(why)});
}

void AdaptiveTail::NoteNotWorth(WorkerId thief, WorkerId victim, std::string_view what,
                                Range stolen, double latest, double now) {
  const double finish = ThiefFinish(thief, stolen, now);
  Note(victim, fmt::format("{}: the thief would end {} at {:.2f} s ({:.2f} s with its overhead), "
                           "not before the victim's end at {:.2f} s",
                           what, stolen.ToString(), finish,
                           finish + speeds().estimate(thief).overhead_s, latest));
}

}  // namespace ballast::balance
