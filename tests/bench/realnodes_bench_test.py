#!/usr/bin/env python3
"""The real-node bench's pure parts (bench/realnodes_bench), no nodes
needed: the Indexed Job's packing and CPU request, the oracle's split and
the lower bound of indivisible items, the bracket rule, the paired
per-round ratios, where a run's time went from a watch and cgroup samples,
the calibration log's reading, the tables, the rounds of several runs
pooled (and their file refused whole when it is wrong), the jobs the bench
makes from the examples as they ship, and the testsuite example's list of
tests with their past durations.

  realnodes_bench_test.py SOURCE_DIR"""
import io
import json
import pathlib
import random
import sys
import tempfile
import types
import unittest
from unittest import mock

SOURCE = pathlib.Path(sys.argv.pop(1) if len(sys.argv) > 1 else
                      pathlib.Path(__file__).resolve().parents[2])
sys.path.insert(0, str(SOURCE / "bench"))

from realnodes_bench import (cli, cluster, figures, pool, report, runs, timing,  # noqa: E402
                             workloads)

BOARDS = {"pi4b-0": 0.5, "pi4b-1": 0.5, "pi3b-0": 0.2}


class Packing(unittest.TestCase):
    def test_largest_first_into_the_lightest_bin(self):
        items = [(10, "a"), (7, "b"), (5, "c"), (3, "d"), (1, "e")]
        self.assertEqual(figures.pack_by_size(items, {"0": 1, "1": 1}),
                         {"0": ["a", "d"], "1": ["b", "c", "e"]})

    def test_weights_take_shares_in_proportion(self):
        items = [(1, str(i)) for i in range(12)]
        bins = figures.pack_by_size(items, BOARDS)
        self.assertEqual([len(bins[b]) for b in BOARDS], [5, 5, 2])

    def test_count_split_keeps_the_order(self):
        names = [str(i) for i in range(10)]
        self.assertEqual(figures.split_by_count(names, 3),
                         [["0", "1", "2"], ["3", "4", "5"], ["6", "7", "8", "9"]])

    def test_request_lets_per_node_pods_fit_and_not_one_more(self):
        self.assertEqual(figures.cpu_request(1, 1), "950m")
        self.assertEqual(figures.cpu_request(1, 2), "450m")
        for cores in (1, 2, 4):
            for per_node in range(1, 10):
                request = int(figures.cpu_request(cores, per_node)[:-1])
                self.assertLessEqual(per_node * request, cores * 1000, (cores, per_node))
                self.assertGreater((per_node + 1) * request, cores * 1000, (cores, per_node))


class Oracle(unittest.TestCase):
    def test_deals_largest_first_to_the_earliest_finish(self):
        lists, load, planned = figures.oracle_split({"a": 4, "b": 3, "c": 2, "d": 1},
                                                    {"x": 1.0, "y": 0.5})
        self.assertEqual(lists, {"x": ["a", "c", "d"], "y": ["b"]})
        self.assertEqual(load, {"x": 7, "y": 3})
        self.assertAlmostEqual(planned, 7.0)

    def test_equal_items_in_proportion_to_speeds(self):
        lists, _, planned = figures.oracle_split({str(i): 1.0 for i in range(12)}, BOARDS)
        self.assertEqual([len(lists[b]) for b in BOARDS], [5, 5, 2])
        self.assertAlmostEqual(planned, 10.0)

    def test_lower_bound_parts(self):
        bound, parts = figures.lower_bound([4, 3, 2, 1], [1.0, 0.5])
        self.assertAlmostEqual(parts["work"], 10 / 1.5)
        self.assertAlmostEqual(parts["k=1"], 4.0)
        self.assertAlmostEqual(parts["k=2"], 7 / 1.5)
        self.assertAlmostEqual(bound, 10 / 1.5)

    def test_a_giant_item_on_the_fastest_board_bounds_it(self):
        bound, parts = figures.lower_bound([10, 1, 1], BOARDS.values())
        self.assertAlmostEqual(bound, 20.0)
        self.assertAlmostEqual(parts["work"], 10.0)
        self.assertAlmostEqual(parts["k=2"], 11.0)

    def test_no_split_beats_the_bound(self):
        seed = random.randrange(1 << 30)
        rng = random.Random(seed)
        for _ in range(200):
            costs = {str(i): rng.paretovariate(1.2) for i in range(rng.randint(1, 40))}
            speeds = {str(b): rng.choice([0.2, 0.5, 1.0]) for b in range(rng.randint(1, 5))}
            bound, _ = figures.lower_bound(costs.values(), speeds.values())
            _, _, planned = figures.oracle_split(costs, speeds)
            self.assertLessEqual(bound, planned * (1 + 1e-9), f"seed {seed}")

    def test_equal_chunks_of_primes(self):
        self.assertEqual(figures.equal_chunks(list(BOARDS.values())), 12)
        self.assertEqual(figures.equal_chunks([1.0, 1.0]), 2)
        self.assertEqual(figures.equal_chunks([1.0, 0.5]), 3)


class Rounds(unittest.TestCase):
    def test_bracket_rule(self):
        self.assertTrue(figures.bracket_kept(100.0, 105.0))
        self.assertTrue(figures.bracket_kept(105.0, 100.0))
        self.assertFalse(figures.bracket_kept(100.0, 105.1))
        self.assertAlmostEqual(figures.bracket_spread(110.0, 100.0), 0.1)
        self.assertEqual(figures.reference(100.0, 104.0), 102.0)

    def test_rounds_run_until_enough_are_kept_or_the_most(self):
        kept, dropped = {"kept": True}, {"kept": False}
        self.assertFalse(figures.enough_rounds([], None, 3))
        self.assertFalse(figures.enough_rounds([kept, kept], None, 3))
        self.assertTrue(figures.enough_rounds([dropped, dropped, dropped], None, 3))
        # --kept 2 of at most 5: a discarded round does not count.
        self.assertFalse(figures.enough_rounds([kept, dropped], 2, 5))
        self.assertTrue(figures.enough_rounds([kept, dropped, kept], 2, 5))
        self.assertTrue(figures.enough_rounds([dropped] * 5, 2, 5))
        self.assertEqual(figures.kept_count([kept, dropped, kept]), 2)
        # A run that stopped at --repeat with fewer kept than --kept is short of it.
        self.assertTrue(figures.short_of_kept([kept, dropped, dropped], 2))
        self.assertFalse(figures.short_of_kept([kept, dropped, kept], 2))
        self.assertFalse(figures.short_of_kept([dropped], None))

    def rounds(self):
        # Round 2 is discarded; round 3 has no Indexed Job run.
        return [
            {"round": 1, "kept": True, "makespans": {"oracle": 100, "weighted": 90, "i": 150}},
            {"round": 2, "kept": False, "makespans": {"oracle": 50, "weighted": 100, "i": 50}},
            {"round": 3, "kept": True, "makespans": {"oracle": 80, "weighted": 100}},
            {"round": 4, "kept": True, "makespans": {"oracle": 200, "weighted": 210, "i": 240}},
        ]

    def test_paired_ratios_over_kept_rounds(self):
        rounds = self.rounds()
        self.assertEqual(figures.paired(rounds, "weighted", "oracle"), [0.9, 1.25, 1.05])
        self.assertEqual(figures.paired(rounds, "i", "oracle"), [1.5, 1.2])
        low, mid = figures.summary(figures.paired(rounds, "weighted", "oracle"))
        self.assertEqual((low, mid), (0.9, 1.05))
        self.assertEqual(figures.summary([]), (None, None))

    def test_every_bracket_holds_the_discarded_rounds_too(self):
        rounds = self.rounds()
        # Round 2's bracket moved: paired leaves it out, every_bracket keeps it.
        self.assertEqual(figures.every_bracket(rounds, "weighted"), [0.9, 2.0, 1.25, 1.05])
        self.assertEqual(figures.every_bracket(rounds, "i"), [1.5, 1.0, 1.2])
        # A run paired with the bracket around it, not the round's first.
        rounds = [{"kept": False, "makespans": {"oracle": 100, "weighted": 90, "i": 132},
                   "refs": {"weighted": (100, False), "i": (120, True)}}]
        self.assertEqual(figures.every_bracket(rounds, "i"), [1.1])

    def test_recovered_share_of_the_indexed_jobs_loss(self):
        # Round 1: the Job lost 50 to the oracle, the WeightedJob beat the
        # oracle by 10: 60 / 50. Round 4: lost 40, the WeightedJob 10 of it:
        # 30 / 40. Round 2 is discarded, round 3 has no Indexed Job run.
        self.assertEqual(figures.recovered(self.rounds(), "i"), [1.2, 0.75])
        # A round where the Job beat the oracle has no loss to recover.
        rounds = [{"kept": True, "makespans": {"oracle": 100, "weighted": 90, "i": 95}}]
        self.assertEqual(figures.recovered(rounds, "i"), [])

    def test_never_a_ratio_of_medians(self):
        rounds = self.rounds()
        ratio_of_medians = (figures.median([90, 100, 210]) / figures.median([100, 80, 200]))
        _, mid = figures.summary(figures.paired(rounds, "weighted", "oracle"))
        self.assertNotAlmostEqual(mid, ratio_of_medians)

    def test_best_by_median_and_spread(self):
        self.assertEqual(figures.best_by_median({"a": [1.3, 1.1], "b": [1.2], "c": []}), "b")
        self.assertIsNone(figures.best_by_median({"c": []}))
        self.assertAlmostEqual(figures.spread([90, 100, 110]), 0.2)
        self.assertIsNone(figures.spread([1.0]))


def seen(t, name, node="", phase="Pending", initialized=False, running=False):
    return timing.PodSeen(t, name, node, phase, initialized, running,
                          phase in ("Succeeded", "Failed"))


class Timing(unittest.TestCase):
    def test_authorizer_refused_names_the_pods_the_node_graph_refused(self):
        def event(name, reason, message):
            return {"involvedObject": {"name": name}, "reason": reason, "message": message}
        events = [
            event("o-pi4b-0", "FailedMount", 'Unable to attach or mount volumes: ... persistent'
                  'volumeclaims "share" is forbidden: User "system:node:pi4b-0" cannot get '
                  "resource ...: no relationship found between node 'pi4b-0' and this object"),
            event("o-pi3b-0", "FailedMount", 'MountVolume.SetUp failed for volume "bins" : '
                  "failed to sync configmap cache: timed out waiting for the condition"),
            event("o-pi3b-0", "FailedMount", 'MountVolume.SetUp failed for volume "t" : '
                  "failed to sync secret cache: timed out waiting for the condition"),
            # A Secret that does not exist is the user's, not the race.
            event("o-pi4b-1", "FailedMount", 'MountVolume.SetUp failed for volume "t" : '
                  'secret "t" not found'),
            event("o-pi4b-1", "Scheduled", "no relationship found between node"),
            # Another run's pod.
            event("w-pi4b-0", "FailedMount", "no relationship found between node 'pi4b-0'"),
        ]
        names = {"o-pi3b-0", "o-pi4b-0", "o-pi4b-1"}
        self.assertEqual(timing.authorizer_refused(events, names), ["o-pi3b-0", "o-pi4b-0"])
        self.assertEqual(timing.authorizer_refused([], names), [])

    def test_busy_span_skips_a_blip_and_idle_ends(self):
        samples, cpu, t = [], 0.0, 0.0
        while t <= 14:
            samples.append((t, cpu))
            rate = 0.5 if 2 <= t < 10 else (0.5 if 1.0 <= t < 1.25 else 0.01)
            cpu += rate * 0.25
            t += 0.25
        self.assertEqual(timing.busy_span(samples, 0.5), (2.0, 10.0))
        self.assertIsNone(timing.busy_span([(0, 0), (1, 0.01), (2, 0.02)], 0.5))

    def test_busy_span_ends_at_the_last_run(self):
        # Busy 0-4, idle 4-6, busy again 6-8 (a steal): until 8.
        samples = [(t, 0.2 * min(t, 4) + 0.2 * max(0, min(t, 8) - 6)) for t in range(0, 11)]
        self.assertEqual(timing.busy_span(samples, 0.2), (0, 8))

    def test_phases(self):
        spans = {"a": (2, 10), "b": (3, 12), "c": (2.5, 11)}
        self.assertEqual(timing.phases(0, 13, spans, ["a", "b", "c"]),
                         {"computing_by": 3, "computing": 7, "tail": 2, "finish": 1})
        self.assertEqual(timing.phases(0, 13, {"a": (2, 10), "b": None}, ["a", "b"])["tail"],
                         None)
        self.assertEqual(timing.last_to_compute(spans, ["a", "b", "c"]), "b")
        # A board done before the last began: no time with every board
        # computing, the tail from the last one's start; the parts add up.
        late = timing.phases(0, 20, {"a": (1, 5), "b": (12, 18)}, ["a", "b"])
        self.assertEqual(late, {"computing_by": 12, "computing": 0, "tail": 6, "finish": 2})
        self.assertEqual(sum(late.values()), 20)

    def test_pods_start(self):
        events = [seen(10.1, "p0"), seen(10.2, "p0", "a"), seen(10.5, "p1", "b"),
                  seen(11.0, "p0", "a", "Pending", True), seen(11.5, "p0", "a", "Running", True, True),
                  seen(12.0, "p1", "b", "Pending", True), seen(13.0, "p1", "b", "Running", True, True),
                  seen(20.0, "p0", "a", "Succeeded", True)]
        first, every, per_board = timing.pods_start(events, 10.0, ["a", "b"])
        self.assertAlmostEqual(first, 1.5)
        self.assertAlmostEqual(every, 3.0)
        init, start = timing.pod_start_parts(per_board, "b")
        self.assertAlmostEqual(init, 1.5)
        self.assertAlmostEqual(start, 1.0)
        _, every, _ = timing.pods_start(events, 10.0, ["a", "b", "c"])
        self.assertIsNone(every)
        self.assertEqual(timing.pod_start_parts(per_board, None), (None, None))

    def test_pod_seen_reads_a_pod(self):
        pod = {"metadata": {"name": "w"}, "spec": {"nodeName": "pi4b-0"},
               "status": {"phase": "Running",
                          "conditions": [{"type": "Initialized", "status": "True"}],
                          "containerStatuses": [{"state": {"running": {}}}]}}
        self.assertEqual(timing.pod_seen(1.0, pod),
                         timing.PodSeen(1.0, "w", "pi4b-0", "Running", True, True, False))

    def test_a_watch_stream_of_objects(self):
        one = json.dumps({"kind": "Pod", "metadata": {"name": "a"}}, indent=4)
        two = json.dumps({"kind": "Pod", "metadata": {"name": "b"}}, indent=4)
        objects, rest = cluster.json_objects(one + "\n" + two + "\n" + two[:20])
        self.assertEqual([o["metadata"]["name"] for o in objects], ["a", "b"])
        self.assertEqual(rest, two[:20])
        self.assertEqual(cluster.json_objects(rest + two[20:] + "\n"),
                         ([{"kind": "Pod", "metadata": {"name": "b"}}], ""))

    def test_the_cpu_sampler_stops_quietly_when_the_beds_cgroups_are_gone(self):
        # An interrupted bench tears the bed down under the sampler's thread:
        # its samples so far stay, and no traceback is printed.
        calls = []

        class Bed:
            boards = ["pi3b-0", "pi4b-0"]

            def node_cpu(self, board):
                calls.append(board)
                if len(calls) > 4:
                    raise FileNotFoundError(f"{board}/kubepods/cpuacct.usage")
                return float(len(calls))

        escaped = []
        with mock.patch("threading.excepthook", escaped.append):
            sampler = cluster.CgroupSampler(Bed(), period=0.001)
            sampler._thread.join(timeout=5)
        self.assertFalse(sampler._thread.is_alive(), "the thread ended by itself")
        self.assertEqual(escaped, [], "nothing escaped the thread")
        samples = sampler.stop()
        self.assertEqual([cpu for _, cpu in samples["pi3b-0"]], [1.0, 3.0])
        self.assertEqual([cpu for _, cpu in samples["pi4b-0"]], [2.0, 4.0])

    def test_items_cpu_from_times(self):
        lines = ["@item a.png", "0m0.010000s 0m0.000000s", "0m0.300000s 0m0.100000s",
                 "noise", "@item b.png", "0m0.010000s 0m0.000000s", "1m0.500000s 0m0.100000s"]
        each, total = timing.items_cpu(lines)
        self.assertEqual(list(each), ["a.png", "b.png"])
        self.assertAlmostEqual(each["a.png"], 0.4)
        self.assertAlmostEqual(each["b.png"], 60.2)
        self.assertAlmostEqual(total, 60.6)

    def test_the_commands_start_is_the_median_of_its_empty_runs(self):
        # Five runs with no item: one slow outlier (a cold page cache) does not move it.
        lines = []
        for i, cpu in enumerate([0.25, 0.51, 0.77, 1.90, 2.14]):
            lines += [f"@item {workloads.EMPTY}{i}", "0m0.000000s 0m0.000000s",
                      f"0m{cpu:.6f}s 0m0.000000s"]
        each, _ = timing.items_cpu(lines)
        self.assertAlmostEqual(workloads.start_of(each.values()), 0.26)
        self.assertEqual(workloads.start_of([]), 0.0)
        self.assertAlmostEqual(workloads.start_of([0.2, 0.4]), 0.3)


    def test_a_runs_start_is_what_items_alone_cost_beyond_one_run_of_them(self):
        # testsuite's script ends before pytest starts when given no test: a
        # run with none costs 0.27 CPU s, eight quick tests 6.46 alone and
        # 3.04 in one run, so each run of pytest starts at 0.49.
        singles = [0.90, 0.64, 0.81, 0.78, 0.85, 1.14, 0.62, 0.72]
        start = workloads.run_start([0.27, 0.26, 0.30], singles, [3.04, 3.10, 2.98])
        self.assertAlmostEqual(start, (6.46 - 3.04) / 7)
        # Never below a run with no item (the runs together came out dear)...
        self.assertAlmostEqual(workloads.run_start([0.27], singles, [6.40]), 0.27)
        # ... nor above the cheapest item alone (they came out cheap).
        self.assertAlmostEqual(workloads.run_start([0.27], singles, [0.10]), 0.62)
        # Without a run of several items, the runs with none.
        self.assertAlmostEqual(workloads.run_start([0.2, 0.4], [0.9], [0.5]), 0.3)
        self.assertAlmostEqual(workloads.run_start([0.2, 0.4], singles, []), 0.3)
        self.assertEqual(workloads.run_start([], [], []), 0.0)

    def test_the_start_comes_off_every_item_and_an_empty_run_doing_the_work_is_refused(self):
        costs = {"a": 0.5, "b": 1.5, "c": 0.25}
        self.assertEqual(workloads.without_start("testsuite", costs, 0.3),
                         {"a": 0.2, "b": 1.2, "c": 0.0})
        # A runner that runs the whole suite when given no test: its empty run
        # costs the work, and the items would all come out at zero.
        with self.assertRaises(SystemExit) as refused:
            workloads.without_start("testsuite", costs, 79.0)
        self.assertIn("testsuite: a run with no item cost 79.00 CPU s", str(refused.exception))
        self.assertIn("median item's run (0.50)", str(refused.exception))

def figures_run(makespan, boards_cpu=10.0, **more):
    base = {"makespan": makespan, "first_pod": 1.0, "all_pods": 2.0, "busy": 0.9,
            "boards_cpu": boards_cpu, "after_end": 0.2, "computing_by": 2.5, "init": 0.5, "cstart": 0.4,
            "computing": makespan - 4, "tail": 1.0, "finish": 0.5, "operator_cpu": 0.3,
            "control_cpu": 2.0}
    base.update(more)
    return base


class Tables(unittest.TestCase):
    def rounds(self):
        out = []
        for number, (o1, o2, w, i, kept) in enumerate(
                [(10, 10.2, 9.9, 15, True), (10, 12, 11, 14, False), (11, 11, 12, 13.2, True)], 1):
            out.append({"round": number, "kept": kept,
                        "oracle": [figures_run(o1), figures_run(o2)],
                        "runs": {"weighted": figures_run(w, own=0.5, lost=0.1),
                                 "cost:12:1": figures_run(i)},
                        "makespans": {"oracle": (o1 + o2) / 2, "weighted": w, "cost:12:1": i}})
        return out

    def test_cells(self):
        self.assertEqual(report.cell(None, 5, ".2f"), "    -")
        self.assertEqual(report.cell(1.234, 6, ".2fx"), " 1.23x")
        self.assertEqual(report.table("t", [("a", 4, ".1f")], [("row", [2.0], "x")], "each"),
                         ["t".ljust(42) + "    a  each", "row".ljust(42) + "  2.0  x"])

    def test_figure_rows_pair_each_round(self):
        labels = cli.labels_for("thumbnails", ["cost:12:1"])
        rows = report.figure_rows(self.rounds(), ["weighted", "cost:12:1"], labels, 12.0, 1.2)
        self.assertEqual([r[0] for r in rows], ["oracle split (the reference)",
                                                "WeightedJob, adaptive",
                                                "Indexed Job, 12 x packed by size, 1/board"])
        oracle, weighted, indexed = (r[1] for r in rows)
        self.assertAlmostEqual(oracle[0], figures.median([10.1, 11]))
        self.assertIsNone(oracle[5])
        self.assertAlmostEqual(weighted[5], min(9.9 / 10.1, 12 / 11))
        self.assertAlmostEqual(weighted[6], figures.median([9.9 / 10.1, 12 / 11]))
        self.assertAlmostEqual(indexed[7], figures.median([15 / 9.9, 13.2 / 12]))
        self.assertAlmostEqual(weighted[3], 10.0)
        self.assertEqual(rows[1][2], "9.90, [11.00], 12.00")
        self.assertEqual(rows[0][2], "10.00/10.20, [10.00/12.00], 11.00/11.00")

    def test_where_rows(self):
        labels = cli.labels_for("thumbnails", ["cost:12:1"])
        rows = report.where_rows(self.rounds(), ["weighted", "cost:12:1"], labels, 12.0)
        titles = [title for title, _, _ in report.WHERE]
        oracle, weighted, _ = (dict(zip(titles, r[1])) for r in rows)
        self.assertEqual(weighted["computing"], figures.median([9.9 - 4, 12 - 4]))
        self.assertEqual(weighted["workers' own"], 0.5)
        self.assertEqual(weighted["lost copies"], 0.1)
        self.assertEqual(weighted["work CPU"], 12.0)
        self.assertIsNone(oracle["workers' own"])
        self.assertEqual(oracle["after end"], 0.2)

    def test_report_names_a_discarded_round_and_the_best_indexed_job(self):
        labels = cli.labels_for("thumbnails", ["cost:12:1"])
        lines = report.workload_report("thumbnails", self.rounds(), ["weighted", "cost:12:1"],
                                       labels, 12.0, 1.2)
        text = "\n".join(lines)
        self.assertIn("thumbnails: round 2 discarded: its oracle took 10.00 and 12.00 s "
                      "around the WeightedJob (20.0 % apart)", text)
        self.assertIn("over 2 kept round(s) of 3, the WeightedJob at", text)
        self.assertIn("the best Indexed Job (Indexed Job, 12 x packed by size, 1/board)", text)
        # Kept rounds 1 and 3: the WeightedJob at 9.9 / 10.1 and 12 / 11, the
        # Job at 15 / 10.1 and 13.2 / 11; it recovered (15 - 9.9) / (15 - 10.1)
        # and (13.2 - 12) / (13.2 - 11) of the Job's loss.
        self.assertIn(f"worst {12 / 11:.3f}, of the oracle's makespan", text)
        shares = [(15 - 9.9) / (15 - 10.1), (13.2 - 12) / (13.2 - 11)]
        self.assertIn(f"recovered {figures.median(shares) * 100:.0f} % (median of the rounds; "
                      f"{min(shares) * 100:.0f} % the least)", text)
        widths = {len(line) for line in lines if line.startswith("WeightedJob")}
        self.assertEqual(len(widths), 2)  # one line in each table
        # Beside the kept rounds, every round's bracket, round 2's too.
        every = figures.every_bracket(self.rounds(), "weighted")
        self.assertEqual(len(every), 3)
        self.assertIn(f"thumbnails: against its bracket in every round, discarded ones too "
                      f"(information: those moved more than 5 %), the WeightedJob at "
                      f"{min(every):.3f} to {max(every):.3f}, median "
                      f"{figures.median(every):.3f}", text)

    def test_waste_is_the_cpu_of_lost_copies_and_after_the_end_over_the_work(self):
        rounds = self.rounds()
        rounds[2]["runs"]["weighted"]["lost"] = 0.4
        # Kept rounds 1 and 3: (0.1 + 0.2) / 12 and (0.4 + 0.2) / 12; round 2
        # is discarded, and the oracle's runs count for nothing here.
        shares = figures.waste_shares(rounds, "weighted", 12.0)
        self.assertEqual(len(shares), 2)
        self.assertAlmostEqual(shares[0], 0.3 / 12)
        self.assertAlmostEqual(shares[1], 0.6 / 12)
        labels = cli.labels_for("thumbnails", ["cost:12:1"])
        text = "\n".join(report.workload_report("thumbnails", rounds, ["weighted", "cost:12:1"],
                                                labels, 12.0, 1.2))
        self.assertIn("the WeightedJob's CPU on copies that lost and after the end, "
                      f"{figures.median(shares) * 100:.1f} % of the work in the median kept "
                      f"round, {0.6 / 12 * 100:.1f} % at most (target 3 %)", text)
        for round_ in rounds:
            for field in ("lost", "after_end"):
                round_["runs"]["weighted"].pop(field, None)
        self.assertEqual(figures.waste_shares(rounds, "weighted", 12.0), [])

    def three_oracle_rounds(self):
        """Rounds as the bench runs them: the oracle before the WeightedJob,
        between it and the Indexed Job, and after; round 2's second bracket
        20 % wide."""
        out = []
        for number, (o1, o2, o3, w, i) in enumerate(
                [(10, 10.2, 10.4, 9.9, 15), (10, 10.4, 12.48, 10.1, 14)], 1):
            refs = {"weighted": ((o1 + o2) / 2, True),
                    "cost:12:1": ((o2 + o3) / 2, figures.bracket_kept(o2, o3))}
            out.append({"round": number, "kept": True, "refs": refs,
                        "oracle": [figures_run(o1), figures_run(o2), figures_run(o3)],
                        "runs": {"weighted": figures_run(w), "cost:12:1": figures_run(i)},
                        "makespans": {"oracle": refs["weighted"][0], "weighted": w,
                                      "cost:12:1": i}})
        return out

    def test_each_run_is_paired_with_the_oracle_either_side_of_it(self):
        rounds = self.three_oracle_rounds()
        self.assertEqual(figures.paired(rounds, "weighted", "oracle"), [9.9 / 10.1, 10.1 / 10.2])
        self.assertEqual(figures.paired(rounds, "cost:12:1", "oracle"), [15 / 10.3],
                         "round 2's Indexed Job is left out: its bracket is 20 % wide")
        self.assertEqual(figures.paired(rounds, "cost:12:1", "weighted"), [15 / 9.9, 14 / 10.1])
        # Round 1: the Job lost 15 / 10.3 - 1 of its reference, the
        # WeightedJob 9.9 / 10.1 - 1 of its own.
        [share] = figures.recovered(rounds, "cost:12:1")
        self.assertAlmostEqual(share, (15 / 10.3 - 9.9 / 10.1) / (15 / 10.3 - 1))
        labels = cli.labels_for("thumbnails", ["cost:12:1"])
        rows = report.figure_rows(rounds, ["weighted", "cost:12:1"], labels, 12.0, 1.2)
        self.assertEqual(rows[0][2], "10.00/10.20/10.40, 10.00/10.40/12.48")
        self.assertEqual(rows[2][2], "15.00, [14.00]")
        text = "\n".join(report.workload_report("thumbnails", rounds, ["weighted", "cost:12:1"],
                                                labels, 12.0, 1.2))
        self.assertIn("thumbnails: round 2, the Indexed Jobs left out: the oracle took 10.40 and "
                      "12.48 s around them (20.0 % apart)", text)
        self.assertIn("over 2 kept round(s) of 2", text)

    def test_a_round_runs_the_oracle_around_the_weighted_job_and_around_the_indexed_jobs(self):
        order = []
        oracle_makespans = iter([10.0, 10.3, 13.0])

        def run(kind, makespan):
            order.append(kind)
            return dict(figures_run(makespan), result="r")

        with mock.patch.object(runs, "oracle_run",
                               lambda b, w, lists, n, when: run(f"oracle {when}",
                                                                next(oracle_makespans))), \
                mock.patch.object(runs, "weighted_run", lambda b, w, n: run("weighted", 10.0)), \
                mock.patch.object(runs, "indexed_run", lambda b, w, n, key: run(key, 14.0)), \
                mock.patch("sys.stdout", new=io.StringIO()) as out:
            variants = ["cost:12:1", "cost:48:2"]
            r = cli.run_round(None, None, 1, {}, variants,
                              cli.labels_for("thumbnails", variants), "r")
        self.assertEqual(order, ["oracle before", "weighted", "oracle mid", "cost:12:1",
                                 "cost:48:2", "oracle after"])
        self.assertEqual(r["refs"], {"weighted": (10.15, True), "cost:12:1": (11.65, False),
                                     "cost:48:2": (11.65, False)})
        self.assertEqual((r["kept"], r["makespans"]["oracle"]), (True, 10.15))
        self.assertIn("the oracle's bracket of the WeightedJob 10.00 / 10.30 s, 3.0 % apart: kept",
                      out.getvalue())
        self.assertIn("the oracle's bracket of the Indexed Jobs 10.30 / 13.00 s, 26.2 % apart: "
                      "discarded", out.getvalue())

    def test_indexed_label(self):
        self.assertEqual(report.indexed_label("count", "30", "1", "primes"),
                         "Indexed Job, 30 x equal counts, 1/board")
        self.assertEqual(report.indexed_label("cost", "30", "2", "primes"),
                         "Indexed Job, 30 x equal cost, 2/board")
        self.assertEqual(report.indexed_label("cost", "12", "1", "recompress"),
                         "Indexed Job, 12 x packed by size, 1/board")
        self.assertEqual(report.indexed_label("cost", "12", "1", "testsuite"),
                         "Indexed Job, 12 x packed by past duration, 1/board")


def pool_record(rounds, work=12.0, commit="abc1234", keys=("weighted", "cost:12:1")):
    """A run's rounds as the bench writes them with --keep."""
    return pool.record("thumbnails", commit, "2026-12-01 01:00:00 UTC", work, 1.2, keys,
                       cli.labels_for("thumbnails", list(keys[1:])), rounds)


def pooled(*records):
    """The records written, read back and pooled, as --pool does."""
    with tempfile.TemporaryDirectory() as tmp:
        loaded = []
        for n, rec in enumerate(records):
            path = pathlib.Path(tmp) / f"run{n}" / "thumbnails" / pool.FILE_NAME
            path.parent.mkdir(parents=True)
            pool.save(path, rec)
            loaded.append((f"run{n}", pool.load(path)))
        return pool.merge(loaded)["thumbnails"]


class Pool(unittest.TestCase):
    def test_one_run_read_back_reports_as_it_did(self):
        rounds = Tables().three_oracle_rounds()
        entry = pooled(pool_record(rounds))
        args = (["weighted", "cost:12:1"], cli.labels_for("thumbnails", ["cost:12:1"]), 12.0, 1.2)
        self.assertEqual(report.workload_report("thumbnails", entry["rounds"], *args),
                         report.workload_report("thumbnails", rounds, *args))
        self.assertEqual((entry["work"], entry["total_speed"], entry["keys"]),
                         (12.0, 1.2, ["weighted", "cost:12:1"]))

    def test_two_runs_pool_as_one_with_each_rounds_own_work(self):
        first, second = Tables().rounds(), Tables().rounds()[:1]
        entry = pooled(pool_record(first, work=12.0),
                       pool_record(second, work=8.0, commit="def5678"))
        rounds = entry["rounds"]
        self.assertEqual([r["round"] for r in rounds], [1, 2, 3, 4])
        self.assertEqual([r["work"] for r in rounds], [12.0, 12.0, 12.0, 8.0])
        self.assertEqual(entry["work"], 10.0)  # the median of the two runs'
        # Kept: rounds 1 and 3 of the first run, round 1 of the second.
        self.assertEqual(figures.paired(rounds, "weighted", "oracle"),
                         [9.9 / 10.1, 12 / 11, 9.9 / 10.1])
        # Each run's boards' CPU (10 s) over its own round's work.
        rows = report.figure_rows(rounds, entry["keys"], entry["labels"], entry["work"], 1.2)
        self.assertAlmostEqual(rows[1][1][8], figures.median([10 / 12, 10 / 12, 10 / 8]))
        shares = figures.waste_shares(rounds, "weighted", entry["work"])
        self.assertEqual([round(x, 6) for x in shares],
                         [round(0.3 / 12, 6), round(0.3 / 12, 6), round(0.3 / 8, 6)])
        text = "\n".join(report.workload_report("thumbnails", rounds, entry["keys"],
                                                entry["labels"], entry["work"], 1.2))
        self.assertIn("over 3 kept round(s) of 4", text)
        self.assertIn("thumbnails: round 2 discarded", text)
        lines = pool.sources_lines("thumbnails", entry["sources"])
        self.assertEqual(lines[:2], [
            "thumbnails: rounds 1-3 from run0 (commit abc1234, started 2026-12-01 01:00:00 UTC, "
            "work 12.00 CPU s on one core)",
            "thumbnails: rounds 4-4 from run1 (commit def5678, started 2026-12-01 01:00:00 UTC, "
            "work 8.00 CPU s on one core)"])
        self.assertIn("the runs are of 2 commits (abc1234, def5678)", lines[2])
        self.assertEqual(len(pool.sources_lines("thumbnails", entry["sources"][:1])), 1)

    def test_every_tuning_any_run_ran(self):
        second = Tables().rounds()
        for r in second:
            r["runs"]["cost:48:2"] = figures_run(20.0)
            r["makespans"]["cost:48:2"] = 20.0
        entry = pooled(pool_record(Tables().rounds()),
                       pool_record(second, keys=("weighted", "cost:12:1", "cost:48:2")))
        self.assertEqual(entry["keys"], ["weighted", "cost:12:1", "cost:48:2"])
        self.assertEqual(len(figures.paired(entry["rounds"], "cost:48:2", "oracle")), 2)
        self.assertEqual(len(figures.paired(entry["rounds"], "cost:12:1", "oracle")), 4)

    def test_another_bed_is_refused(self):
        other = pool_record(Tables().rounds())
        other["total_speed"] = 1.5
        with self.assertRaisesRegex(pool.PoolError, "^run1: its boards' speeds sum to 1.5 cores, "
                                                    "run0's to 1.2: not the same bed$"):
            pooled(pool_record(Tables().rounds()), other)

    def written(self, tmp, text):
        path = pathlib.Path(tmp) / "rounds.json"
        path.write_text(text)
        return path

    def test_a_wrong_file_is_named_with_its_field(self):
        good = json.loads(json.dumps(pool_record(Tables().rounds())))
        cases = [
            ('{"format": 1, "rounds": [', "not JSON, line 1 column 26"),
            ("[" * 100000 + "]" * 100000, "not JSON (RecursionError)"),
            ("[]", "the file: expected an object, found []"),
            (json.dumps(dict(good, format=2)), "format: expected 1"),
            (json.dumps(dict(good, work="12")), 'work: expected a number, found "12"'),
            (json.dumps(dict(good, total_speed=0)), "total_speed: expected a number above 0"),
            (json.dumps(dict(good, keys=["cost:12:1"])), 'keys: expected "weighted" then'),
            (json.dumps(dict(good, rounds=[])), "rounds: expected a list of 1 to 1000"),
        ]
        bad_round = json.loads(json.dumps(good))
        bad_round["rounds"][1]["runs"]["weighted"]["makespan"] = True
        cases.append((json.dumps(bad_round), "rounds[1].runs.weighted.makespan: expected a number, "
                                            "found true"))
        bad_round = json.loads(json.dumps(good))
        bad_round["rounds"][0]["runs"]["cost:99:1"] = figures_run(3.0)
        cases.append((json.dumps(bad_round), 'rounds[0].runs: expected runs of weighted, '
                                            'cost:12:1, found "cost:99:1"'))
        bad_round = json.loads(json.dumps(good))
        bad_round["rounds"][2]["makespans"]["cost:48:2"] = 3.0
        cases.append((json.dumps(bad_round), "rounds[2].makespans: expected a makespan for each"))
        bad_round = json.loads(json.dumps(good))
        bad_round["rounds"][0]["oracle"][1]["busy"] = "NaN"
        cases.append((json.dumps(bad_round).replace('"NaN"', "NaN"),
                      "rounds[0].oracle[1].busy: expected a number, found NaN"))
        with tempfile.TemporaryDirectory() as tmp:
            for text, message in cases:
                path = self.written(tmp, text)
                with self.assertRaises(pool.PoolError, msg=message) as raised:
                    pool.load(path)
                self.assertTrue(str(raised.exception).startswith(f"{path}: {message}"),
                                (str(raised.exception), message))
            path = self.written(tmp, json.dumps(good))
            with mock.patch.object(pool, "MOST_BYTES", 100), \
                    self.assertRaisesRegex(pool.PoolError, "larger than"):
                pool.load(path)
            with self.assertRaisesRegex(pool.PoolError, "No such file"):
                pool.load(pathlib.Path(tmp) / "none.json")

    def test_whatever_a_damaged_file_holds_it_is_refused_or_reported(self):
        good = json.loads(json.dumps(pool_record(Tables().three_oracle_rounds())))
        junk = [None, True, -1, 0, 1e308, "x", [], {}, [1, 2], {"makespan": 1}]
        chance = random.Random(62)

        def places(value, path=()):
            yield path
            if isinstance(value, dict):
                for key, inner in value.items():
                    yield from places(inner, path + (key,))
            elif isinstance(value, list):
                for i, inner in enumerate(value):
                    yield from places(inner, path + (i,))

        paths = list(places(good))[1:]
        loaded = 0
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(400):
                damaged = json.loads(json.dumps(good))
                for _ in range(chance.randint(1, 3)):
                    *parent, last = chance.choice(paths)
                    holder = damaged
                    try:
                        for step in parent:
                            holder = holder[step]
                        if chance.random() < 0.3 and isinstance(holder, dict):
                            holder.pop(last, None)
                        else:
                            holder[last] = chance.choice(junk)
                    except (KeyError, IndexError, TypeError):
                        continue
                path = self.written(tmp, json.dumps(damaged))
                try:
                    rec = pool.load(path)
                except pool.PoolError:
                    continue
                loaded += 1
                entry = pool.merge([("damaged", rec)])["thumbnails"]
                report.workload_report("thumbnails", entry["rounds"], entry["keys"],
                                       entry["labels"], entry["work"], entry["total_speed"])
        self.assertGreater(loaded, 20)  # some damage is harmless (a figure of None, say)

    def test_keep_directories_and_the_command(self):
        with tempfile.TemporaryDirectory() as tmp:
            keep = pathlib.Path(tmp)
            for run, rounds in (("a", Tables().rounds()), ("b", Tables().rounds()[:1])):
                (keep / run / "thumbnails").mkdir(parents=True)
                pool.save(keep / run / "thumbnails" / pool.FILE_NAME, pool_record(rounds))
            self.assertEqual(pool.files([keep / "a", keep / "b" / "thumbnails"]),
                             [keep / "a/thumbnails/rounds.json", keep / "b/thumbnails/rounds.json"])
            for missing in (keep / "none", keep):
                with self.assertRaises(pool.PoolError):
                    pool.files([missing])
            for kept, status in (("3", 0), ("4", cli.EXIT_SHORT_OF_KEPT)):
                with mock.patch("sys.stdout", new=io.StringIO()) as out, \
                        mock.patch("sys.stderr", new=io.StringIO()) as err:
                    self.assertEqual(cli.main(["--pool", str(keep / "a"), str(keep / "b"),
                                               "--kept", kept]), status)
                self.assertIn("thumbnails: over 3 kept round(s) of 4", out.getvalue())
                self.assertIn(f"thumbnails: rounds 4-4 from {keep / 'b/thumbnails/rounds.json'}",
                              out.getvalue())
                self.assertEqual("fewer rounds kept" in err.getvalue(), status != 0)
            (keep / "a/thumbnails/rounds.json").write_text("{")
            with mock.patch("sys.stderr", new=io.StringIO()) as err:
                self.assertEqual(cli.main(["--pool", str(keep / "a")]), 1)
            self.assertIn("rounds.json: not JSON, line 1", err.getvalue())
            with mock.patch("sys.stderr", new=io.StringIO()) as err:
                self.assertEqual(cli.main(["--pool", str(keep / "b"), "--workload", "primes"]), 1)
            self.assertIn("no rounds of primes", err.getvalue())

    def test_a_run_is_saved_whole_or_not_at_all(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = pathlib.Path(tmp) / pool.FILE_NAME
            pool.save(path, pool_record(Tables().rounds()))
            with mock.patch.object(pool.os, "replace", side_effect=OSError("killed")), \
                    self.assertRaises(OSError):
                pool.save(path, pool_record(Tables().rounds()[:1]))
            self.assertEqual(len(pool.load(path)["rounds"]), 3)
            self.assertEqual(cli.commit_of(pathlib.Path(tmp)), "unknown")


class Jobs(unittest.TestCase):
    def bench(self):
        return types.SimpleNamespace(root=SOURCE, version="9.9.9", cluster=None,
                                     worker_image="10.244.0.1:5000/ballast-io/ballast-worker:9.9.9",
                                     oracle_label="o", speeds=dict(BOARDS),
                                     work=pathlib.Path("/nonexistent"),
                                     options=types.SimpleNamespace(limit=5000))

    def test_the_examples_jobs_as_the_bench_runs_them(self):
        for name in ("thumbnails", "recompress", "anomalies", "testsuite", "compile"):
            share = workloads.Share(self.bench(), name)
            job = share.weighted("bench-w1")
            self.assertEqual(job["metadata"]["name"], "bench-w1")
            self.assertEqual(job["spec"]["nodeSelector"], {"ballast.io/pool": "seed000"})
            env = job["spec"]["template"]["spec"]["containers"][0]["env"]
            self.assertIn({"name": "MAGICK_THREAD_LIMIT", "value": "1"}, env)
            self.assertEqual(job["spec"]["itemsFrom"]["configMap"]["name"],
                             workloads.SHARE[name]["list"])
            if share.corrupt:
                corrupt = share.weighted("bench-w1-corrupt", corrupt=True)
                self.assertEqual(corrupt["spec"]["itemsFrom"]["configMap"]["name"],
                                 workloads.SHARE[name]["list"] + "-corrupt")
            merge = job["spec"]["workload"]["exec"]["result"]["merge"]
            for field in workloads.SHARE[name]["fields"]:
                self.assertEqual(merge[field], "sum", (name, field))

    def test_primes_job_and_oracle_pod(self):
        primes = workloads.Primes(self.bench())
        self.assertEqual(primes.chunks, 12)
        job = primes.weighted("bench-w1")
        self.assertEqual(job["spec"]["workload"]["primes"]["limit"], 5000)
        pod = primes.oracle_pod("o-pi4b-0", "pi4b-0", ["0", "3", "5"])
        self.assertEqual([c["name"] for c in pod["spec"]["initContainers"]],
                         ["share-0", "share-3"])
        # The worker image as the bed's registry serves it, pulled when missing.
        self.assertEqual({(c["image"], c["imagePullPolicy"]) for c in pod["spec"]["initContainers"]},
                         {("10.244.0.1:5000/ballast-io/ballast-worker:9.9.9", "IfNotPresent")})
        self.assertEqual(pod["spec"]["containers"][0]["args"][:8],
                         ["slice", "--count", "12", "--split", "cost", "--index", "5",
                          "--result-file"])
        done = {"status": {
            "initContainerStatuses": [{"state": {"terminated": {"message": json.dumps(
                {"result": {"primes": {"count": 3}}})}}}],
            "containerStatuses": [{"state": {"terminated": {"message": json.dumps(
                {"result": {"primes": {"count": 4}}})}}}]}}
        self.assertEqual(primes.oracle_result([done, done]), "14")

    def test_list_and_sums(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = pathlib.Path(tmp)
            for rel, size in (("b/x.gz", 3), ("a.gz", 5), ("corrupt/bad.gz", 1), ("n.txt", 2)):
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_bytes(b"x" * size)
            self.assertEqual(workloads.list_lines(root, ".gz", "corrupt/"), ["5\ta.gz", "3\tb/x.gz"])
        self.assertEqual(workloads.sum_fields(['{"a": 1, "b": 2}', "", '{"a": 3}'], ["a", "b"]),
                         "4:2")

    def test_the_suite_listed_by_its_past_durations(self):
        """testsuite's list as its shard-list makes it from the maker's
        checkout (pytest collects it here): every test once, a duration in
        milliseconds each, the new tests at the mean; the failing test
        outside the clean list, its cost taken when the corrupt list is made;
        and the job's result merges the fields the bench compares."""
        try:
            import pytest  # noqa: F401  (shard-list collects with it)
        except ImportError:
            self.skipTest("pytest is missing (scripts/install-deps installs python3-pytest)")
        with tempfile.TemporaryDirectory() as tmp:
            bench = self.bench()
            bench.work = pathlib.Path(tmp)
            bench.options = types.SimpleNamespace(suite_seconds=4)
            share = workloads.Share(bench, "testsuite")
            share.share = pathlib.Path(tmp) / "share-testsuite"
            cfg = share.cfg
            args = [str(a).format(dir=share.share / "in", suite_seconds=4) for a in cfg["make"]]
            workloads.run(args, cwd=SOURCE)
            lines = share._lines()
            durations = json.loads((share.share / "in/.test_durations").read_text())
        tests = [line.split("\t", 1)[1] for line in lines]
        self.assertEqual(len(tests), 60)
        self.assertEqual(len(set(tests)), 60)
        self.assertNotIn(share.corrupt, tests)
        self.assertTrue(all(t.startswith("tests/test_") for t in tests), tests[:3])
        costs = {t: int(line.split("\t")[0]) for t, line in zip(tests, lines)}
        new = [t for t in tests if t not in durations]
        self.assertTrue(new, "the maker left no test without a duration")
        recorded = [durations[t] for t in tests if t in durations]
        mean = round(sum(recorded) / len(recorded) * 1000)
        for test in tests:
            self.assertEqual(costs[test], max(1, round(durations[test] * 1000))
                             if test in durations else mean, test)
        self.assertEqual(share.corrupt_cost, mean)
        merge = share.weighted("bench-w1")["spec"]["workload"]["exec"]["result"]["merge"]
        self.assertEqual(merge, {"passed": "sum", "cases": "sum"})

    def test_indexed_messages_take_each_index_once(self):
        def pod(index, phase, created, message):
            return {"metadata": {"annotations": {
                "batch.kubernetes.io/job-completion-index": index},
                "creationTimestamp": created},
                "status": {"phase": phase, "containerStatuses": [
                    {"state": {"terminated": {"message": message}}}]}}
        pods = [pod("0", "Failed", "t1", "bad"), pod("0", "Succeeded", "t0", "good"),
                pod("1", "Failed", "t1", "last"), pod("1", "Failed", "t0", "first")]
        self.assertEqual(sorted(runs.indexed_messages(pods)), ["good", "last"])


class PullStart(unittest.TestCase):
    def test_sizes_as_numfmt_writes_them(self):
        # `numfmt --to=si --suffix=B` on each.
        for count, text in [(0, "0B"), (999, "999B"), (1000, "1.0KB"), (1049, "1.1KB"),
                            (9949, "10KB"), (12345678, "13MB"), (21093000, "22MB"),
                            (999999, "1.0MB"), (9999999, "10MB"), (10000001, "11MB"),
                            (123456789, "124MB"), (1000000000, "1.0GB")]:
            self.assertEqual(report.si_bytes(count), text, count)

    def test_pulled_events(self):
        self.assertEqual(timing.pulled_text(
            'Successfully pulled image "10.0.0.1:5000/ballast-io/ballast-worker:0.1.0" in '
            '512ms (1.02s including waiting). Image size: 21093000 bytes.'),
            "pulled in 512ms (1.02s with waiting)")
        self.assertEqual(timing.pulled_text(
            'Container image "10.0.0.1:5000/ballast-io/ballast-worker:0.1.0" already present '
            'on machine'), "present")
        self.assertEqual(timing.pulled_text("something else"), "something else")

    def test_every_name_of_the_image(self):
        d, other = "sha256:" + "a" * 64, "sha256:" + "b" * 64
        kind = "application/vnd.oci.image.index.v1+json"
        listing = (
            "REF TYPE DIGEST SIZE PLATFORMS LABELS\n"
            f"10.0.0.1:5000/ballast-io/ballast-worker:0.1.0 {kind} {d} 21.1 MiB linux/amd64 -\n"
            f"10.0.0.1:5000/ballast-io/ballast-worker@{d} {kind} {d} 21.1 MiB linux/amd64 -\n"
            f"ghcr.io/ballast-io/ballast:0.1.0 {kind} {other} 9.0 MiB linux/amd64 -\n"
            f"sha256:{'c' * 64} {kind} {d} 21.1 MiB linux/amd64 -\n"
            f"docker.io/library/ballast-worker:0.1.0 {kind} {'sha256:' + 'e' * 64} 21.1 MiB "
            "linux/amd64 -\n"
            f"localhost/ballast-workers:1 {kind} {other} 1 MiB linux/amd64 -\n")
        names = ["10.0.0.1:5000/ballast-io/ballast-worker:0.1.0",
                 "ghcr.io/ballast-io/ballast-worker:0.1.0"]
        self.assertEqual(timing.image_refs(listing, names), [
            names[0], f"10.0.0.1:5000/ballast-io/ballast-worker@{d}", f"sha256:{'c' * 64}",
            "docker.io/library/ballast-worker:0.1.0"])
        self.assertEqual(timing.image_refs("REF TYPE DIGEST SIZE PLATFORMS LABELS\n", names), [])
        # The image's ID alone, left on a kept containerd root: named, it goes.
        alone = ("REF TYPE DIGEST SIZE PLATFORMS LABELS\n"
                 f"sha256:{'c' * 64} {kind} {d} 21.1 MiB linux/amd64 -\n"
                 f"sha256:{'f' * 64} {kind} {other} 9.0 MiB linux/amd64 -\n")
        self.assertEqual(timing.image_refs(alone, [*names, f"sha256:{'c' * 64}"]),
                         [f"sha256:{'c' * 64}"])

    def test_lines_and_medians(self):
        self.assertEqual(report.pull_run_line(1, "cold", 1.456, 2.41, 9.2, "Succeeded"),
                         "  round 1, cold:    apply -> 1st pod Running  1.46 s, every board  "
                         "2.41 s (job 9.20 s, Succeeded)")
        lines = report.pull_summary({"cold": [1.46, 1.5, 1.4], "present": [1.2, 1.3]},
                                    {"cold": [2.41, 2.03, 2.97], "present": [3.05, 1.69]})
        self.assertEqual(lines, [
            "worker image pulled on every board:      1st pod  1.46 s, every board  2.41 s "
            "(medians of 3; every board: 2.41 2.03 2.97)",
            "worker image present:                    1st pod  1.25 s, every board  2.37 s "
            "(medians of 2; every board: 3.05 1.69)"])


class Options(unittest.TestCase):
    def test_defaults_and_refusals(self):
        options = cli.parse([])
        self.assertEqual(options.workloads, cli.WORKLOADS)
        self.assertEqual(options.repeat, 3)
        self.assertEqual(cli.parse(["--workload", "thumbnails,primes"]).workloads,
                         ["thumbnails", "primes"])
        self.assertEqual(cli.parse(["--indexed", "cost:12:1,count:3:2"]).variants,
                         ["cost:12:1", "count:3:2"])
        self.assertEqual((options.pull_start, options.limit), (0, 1000000))
        self.assertEqual(options.workloads[-2:], ["testsuite", "compile"])
        self.assertEqual((options.suite_seconds, options.kilobytes), (80, 5000))
        self.assertEqual(set(cli.INDEXED), set(cli.WORKLOADS))
        options = cli.parse(["--pull-start", "3"])
        self.assertEqual((options.pull_start, options.limit), (3, 200000))
        self.assertEqual(cli.parse(["--pull-start", "2", "--limit", "50000"]).limit, 50000)
        self.assertIsNone(options.kept)
        self.assertEqual(cli.parse(["--repeat", "6", "--kept", "3"]).kept, 3)
        for bad in (["--workload", "matmul"], ["--indexed", "cost:12"], ["--repeat", "0"],
                    ["--pull-start", "0"], ["--pull-start", "x"], ["--kept", "0"],
                    ["--repeat", "3", "--kept", "4"]):
            with self.assertRaises(SystemExit) as exit_:
                cli.parse(bad)
            self.assertEqual(exit_.exception.code, 2, bad)


if __name__ == "__main__":
    unittest.main(verbosity=1)
