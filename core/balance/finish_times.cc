#include "core/balance/finish_times.h"

#include <algorithm>
#include <cmath>

namespace ballast::balance {
namespace {

// A fixed pseudo-random priority per worker (splitmix64), so that the treap
// is balanced in expectation and every run is the same.
uint32_t Priority(uint32_t worker) {
  uint64_t z = worker + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<uint32_t>(z ^ (z >> 31));
}

}  // namespace

FinishTimes::FinishTimes(size_t workers) : nodes_(workers) {
  for (uint32_t id = 0; id < nodes_.size(); ++id) nodes_[id].priority = Priority(id);
}

WorkerId FinishTimes::Add() {
  const auto id = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(Node{});
  nodes_.back().priority = Priority(id);
  return id;
}

void FinishTimes::Set(WorkerId worker, double finish, double speed) {
  speed = std::isnan(speed) ? 0 : std::clamp(speed, 0.0, kMaxSpeed);
  finish = std::isnan(finish) ? kMaxFinish : std::clamp(finish, -kMaxFinish, kMaxFinish);
  Clear(worker);
  Node& node = nodes_[worker];
  node.finish = finish;
  node.speed = speed;
  node.left = node.right = kNil;
  node.set = true;
  Update(worker);
  const auto [before, after] = Split(root_, finish, worker);
  root_ = Merge(Merge(before, worker), after);
  ++size_;
}

std::optional<double> FinishTimes::FinishOf(WorkerId worker) const {
  const Node& node = nodes_[worker];
  return node.set ? std::optional<double>(node.finish) : std::nullopt;
}

void FinishTimes::Clear(WorkerId worker) {
  Node& node = nodes_[worker];
  if (!node.set) return;
  const auto [before, rest] = Split(root_, node.finish, worker);
  const auto [self, after] = Split(rest, node.finish, worker + 1);
  (void)self;  // exactly `worker`: no key lies between (f, w) and (f, w + 1)
  root_ = Merge(before, after);
  node.set = false;
  --size_;
}

double FinishTimes::RemainingCost(double now) const {
  const Sums total = Total();
  const Sums past = Before(now);
  const double speed = total.speed - past.speed;
  const double speed_finish = total.speed_finish - past.speed_finish;
  return std::max(0.0, speed_finish - now * speed);
}

double FinishTimes::SpareCost(double now, double until) const {
  if (until <= now) return 0;
  const Sums past = Before(now);
  const Sums soon = Before(until);
  const double idle = past.speed * (until - now);
  const double running_out =
      until * (soon.speed - past.speed) - (soon.speed_finish - past.speed_finish);
  return std::max(0.0, idle + running_out);
}

// Latest and Earliest walk one path down the treap: at most size() steps,
// because Set keeps the keys totally ordered and so the treap a tree.
std::optional<std::pair<WorkerId, double>> FinishTimes::Latest(double now) const {
  if (root_ == kNil) return std::nullopt;
  uint32_t node = root_;
  while (nodes_[node].right != kNil) node = nodes_[node].right;
  if (nodes_[node].finish <= now) return std::nullopt;
  return std::make_pair(node, nodes_[node].finish);
}

std::optional<std::pair<WorkerId, double>> FinishTimes::Earliest() const {
  if (root_ == kNil) return std::nullopt;
  uint32_t node = root_;
  while (nodes_[node].left != kNil) node = nodes_[node].left;
  return std::make_pair(node, nodes_[node].finish);
}

std::optional<std::pair<WorkerId, double>> FinishTimes::Preceding(WorkerId worker,
                                                                  double now) const {
  const double finish = nodes_[worker].finish;
  // The last node on the search path whose key is before the worker's.
  uint32_t found = kNil;
  for (uint32_t node = root_; node != kNil;) {
    if (Less(node, finish, worker)) {
      found = node;
      node = nodes_[node].right;
    } else {
      node = nodes_[node].left;
    }
  }
  if (found == kNil || nodes_[found].finish <= now) return std::nullopt;
  return std::make_pair(found, nodes_[found].finish);
}

std::optional<std::pair<WorkerId, double>> FinishTimes::Following(WorkerId worker) const {
  // The last node on the search path whose key is after the worker's.
  uint32_t found = kNil;
  for (uint32_t node = root_; node != kNil;) {
    if (Less(worker, nodes_[node].finish, node)) {
      found = node;
      node = nodes_[node].left;
    } else {
      node = nodes_[node].right;
    }
  }
  if (found == kNil) return std::nullopt;
  return std::make_pair(found, nodes_[found].finish);
}

bool FinishTimes::Less(uint32_t a, double finish, uint32_t b) const {
  return nodes_[a].finish != finish ? nodes_[a].finish < finish : a < b;
}

void FinishTimes::Update(uint32_t id) {
  Node& node = nodes_[id];
  node.sum_speed = node.speed;
  node.sum_speed_finish = node.speed * node.finish;
  for (uint32_t child : {node.left, node.right}) {
    if (child == kNil) continue;
    node.sum_speed += nodes_[child].sum_speed;
    node.sum_speed_finish += nodes_[child].sum_speed_finish;
  }
}

std::pair<uint32_t, uint32_t> FinishTimes::Split(uint32_t tree, double finish, uint32_t worker) {
  if (tree == kNil) return {kNil, kNil};
  Node& node = nodes_[tree];
  if (Less(tree, finish, worker)) {
    const auto [before, after] = Split(node.right, finish, worker);
    node.right = before;
    Update(tree);
    return {tree, after};
  }
  const auto [before, after] = Split(node.left, finish, worker);
  node.left = after;
  Update(tree);
  return {before, tree};
}

uint32_t FinishTimes::Merge(uint32_t left, uint32_t right) {
  if (left == kNil) return right;
  if (right == kNil) return left;
  if (nodes_[left].priority > nodes_[right].priority) {
    nodes_[left].right = Merge(nodes_[left].right, right);
    Update(left);
    return left;
  }
  nodes_[right].left = Merge(left, nodes_[right].left);
  Update(right);
  return right;
}

FinishTimes::Sums FinishTimes::Before(double finish) const {
  Sums sums;
  uint32_t node = root_;
  while (node != kNil) {
    const Node& n = nodes_[node];
    if (n.finish < finish) {
      if (n.left != kNil) {
        sums.speed += nodes_[n.left].sum_speed;
        sums.speed_finish += nodes_[n.left].sum_speed_finish;
      }
      sums.speed += n.speed;
      sums.speed_finish += n.speed * n.finish;
      node = n.right;
    } else {
      node = n.left;
    }
  }
  return sums;
}

FinishTimes::Sums FinishTimes::Total() const {
  if (root_ == kNil) return {};
  return {nodes_[root_].sum_speed, nodes_[root_].sum_speed_finish};
}

}  // namespace ballast::balance
