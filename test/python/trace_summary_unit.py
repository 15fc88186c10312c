# RUN: %python %s
"""Tests of `python3 -m zeroc trace-summary` (zeroc.trace) on hand-written
traces whose figures are worked out by hand.

Runs under lit or directly: ``python3 test/python/trace_summary_unit.py``.
"""

import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from zeroc import trace  # noqa: E402


def span(pid, tid, begin, end, name, cat, **args):
    return [{"ph": "B", "pid": pid, "tid": tid, "ts": begin, "name": name, "cat": cat,
             "args": args},
            {"ph": "E", "pid": pid, "tid": tid, "ts": end}]


def comm(pid, begin, end, ident, **args):
    common = {"pid": pid, "tid": 2, "cat": "communication", "id": ident, "name": "all_gather"}
    return [dict(common, ph="b", ts=begin, args=args), dict(common, ph="e", ts=end)]


def two_ranks():
    """Rank 0 and rank 1, one step of 1000 us each. Rank 0: matmul 400 us
    and 200 us, layernorm 100 us; two all-gathers in flight over
    [100, 500] and [300, 700] (union 600 us); a wait of 150 us in forward
    and 50 us in backward. Rank 1: matmul 500 us; one all-gather over
    [0, 400]; a wait of 100 us in the optimizer."""
    events = [{"ph": "M", "pid": 0, "name": "process_name", "args": {"name": "rank 0"}}]
    events += span(0, 0, 0, 1000, "step 1", "step", step=1)
    events += span(0, 1, 0, 400, "matmul transformer.h.0.attn.c_attn", "matmul", step=1,
                   phase="forward")
    events += span(0, 1, 400, 500, "layernorm transformer.h.0.ln_1", "layernorm", step=1,
                   phase="forward")
    events += span(0, 1, 650, 850, "matmul transformer.h.0.attn.c_attn", "matmul", step=1,
                   phase="backward")
    events += span(0, 3, 500, 650, "wait all_gather", "wait", step=1, phase="forward")
    events += span(0, 3, 900, 950, "wait all_gather", "wait", step=1, phase="backward")
    events += comm(0, 100, 500, "r0.0", step=1, collective=0, collective_kind="all_gather",
                   bytes=1000)
    events += comm(0, 300, 700, "r0.1", step=1, collective=1, collective_kind="all_gather",
                   bytes=3000)
    events += span(1, 0, 0, 1000, "step 1", "step", step=1)
    events += span(1, 1, 0, 500, "matmul transformer.h.0.attn.c_attn", "matmul", step=1,
                   phase="forward")
    events += span(1, 3, 600, 700, "wait all_reduce", "wait", step=1, phase="optimizer")
    events += comm(1, 0, 400, "r1.0", step=1, collective=0, collective_kind="all_gather",
                   bytes=2000)
    return {"traceEvents": events,
            "otherData": {"model": "gpt2", "world_size": 2, "zero_stage": 3, "first_step": 1,
                          "last_step": 1, "clock": "host"}}


class SummaryTest(unittest.TestCase):
    def test_figures(self):
        s = trace.summarize(two_ranks())
        # Means over the 2 (rank, step) samples, in ms.
        self.assertAlmostEqual(s["step_ms"], 1.0)
        self.assertAlmostEqual(s["compute_ms_by_kind"]["matmul"], (400 + 200 + 500) / 2e3)
        self.assertAlmostEqual(s["compute_ms_by_kind"]["layernorm"], 100 / 2e3)
        self.assertAlmostEqual(s["calls_by_kind"]["matmul"], 1.5)
        # In flight: union 600 us on rank 0, 400 on rank 1.
        self.assertAlmostEqual(s["comm_in_flight_ms"], (600 + 400) / 2e3)
        self.assertAlmostEqual(s["exposed_comm_ms"], (150 + 50 + 100) / 2e3)
        self.assertEqual(s["exposed_comm_ms_by_phase"],
                         {"forward": 0.075, "backward": 0.025, "optimizer": 0.05})
        self.assertAlmostEqual(s["overlap"], 1 - 300 / 1000)
        self.assertAlmostEqual(s["bytes_sent"], 3000)
        self.assertEqual(s["collectives"], {"all_gather": 1.5})
        self.assertEqual((s["zero_stage"], s["world_size"]), (3, 2))

    def test_command_line(self):
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "t.json")
            with open(path, "w") as f:
                json.dump(two_ranks(), f)
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(trace.main([path, path]), 0)
            text = out.getvalue()
            self.assertIn("gpt2, ZeRO stage 3, 2 rank(s), steps 1-1 (clock: host)", text)
            self.assertIn("  matmul                      0.550   91.7%     1.5", text)
            self.assertIn("in flight 0.500 ms, exposed (waiting) 0.150 ms, overlap 70.0%", text)
            self.assertIn("exposed by phase: forward 0.075 ms, backward 0.025 ms, optimizer "
                          "0.050 ms", text)
            # Two traces: a line each at the end.
            self.assertEqual(text.count("     3     2      1.000       0.150    70.0%"), 2)
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(trace.main(["--json", path]), 0)
            self.assertAlmostEqual(json.loads(out.getvalue())[path]["overlap"], 0.7)

    def test_errors(self):
        with tempfile.TemporaryDirectory() as work:
            bad = os.path.join(work, "bad.json")
            with open(bad, "w") as f:
                f.write("{not json")
            unbalanced = os.path.join(work, "unbalanced.json")
            with open(unbalanced, "w") as f:
                json.dump({"traceEvents": [{"ph": "E", "pid": 0, "tid": 1, "ts": 5}]}, f)
            for path, message in [(os.path.join(work, "missing.json"), "cannot read"),
                                  (bad, "not JSON"),
                                  (unbalanced, "an end without a begin on track (0, 1)")]:
                err = io.StringIO()
                with redirect_stderr(err):
                    self.assertEqual(trace.main([path]), 1)
                self.assertIn(f"python3 -m zeroc trace-summary: error: {path}", err.getvalue())
                self.assertIn(message, err.getvalue())


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=1)
