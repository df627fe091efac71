"""The timeline: the event engine, the plan as events, faults, the trace and the command."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from ringsim import ALGORITHMS, RingsimError, make_plan
from ringsim.algorithms.timing import unavailable
from ringsim.cli import main
from ringsim.cost.model import CostModel, price
from ringsim.core.layout import Layout
from ringsim.timeline import Engine, simulate, slow_gpu, slow_link, delay
from ringsim.timeline.report import fault_costs, path_lines, route_around
from ringsim.timeline.trace import events


def runnable(name: str, gpus: int, topology: str = "flat") -> CostModel:
    """The topology's model, or one DGX H100's where the topology cannot run the algorithm (NVLS
    needs a switch that adds); a drawn case that no node can run is skipped."""
    model = CostModel.of(topology)
    if unavailable(name, model, gpus):
        model = CostModel.of("dgx-h100")
    assume(not unavailable(name, model, gpus))
    return model


def test_engine_runs_in_time_then_scheduling_order():
    engine, seen = Engine(), []
    for name, t in (("b", 2.0), ("a", 1.0), ("c", 2.0), ("d", 1.0)):
        engine.at(t, lambda name=name: seen.append((engine.now, name)))
    engine.run()
    assert seen == [(1.0, "a"), (1.0, "d"), (2.0, "b"), (2.0, "c")]


def test_engine_until_and_errors():
    engine, seen = Engine(), []
    engine.at(1.0, lambda: engine.after(5.0, lambda: seen.append(engine.now)))
    assert engine.run(until=3.0) == 3.0 and seen == []
    engine.run()
    assert seen == [6.0]
    with pytest.raises(RingsimError):
        engine.at(1.0, lambda: None)  # the past
    engine.at(7.0, lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):  # a failing event stops the run, as in SimPy
        engine.run()


def reference(plan, elements, model, faults=()):
    """The timeline as a sweep, written from the rules in the docstring, not from the engine:
    per step, per transfer in queue order, start = max(data ready, out port free, in port
    free, joined)."""
    g, per = plan.gpus, model.topology.gpus_per_node
    layout = Layout(plan.segments, elements)
    ready = np.zeros((plan.participants, plan.segments))
    free: dict = {}
    joined = np.zeros(plan.participants)
    for f in faults:
        if f.kind == "delay":
            joined[f.gpus[0]] = f.value
    end_all = 0.0
    for step in plan.steps:
        sizes = layout.spans(step.first, step.last)
        writes = []
        ts = [t for t, n in zip(step.transfers(), sizes) if n > 0]
        ns = [int(n) for n in sizes if n > 0]
        def key(item):
            t = item[0]
            p = g if per is None else per
            nodes = -(-g // p)
            lv = 0 if per is None or t.src // per == t.dst // per else 1
            return ((lv * nodes + (t.dst // p - t.src // p) % nodes) * p + (t.dst % p - t.src % p) % p, t.src)
        for t, n in sorted(zip(ts, ns), key=key):
            lv = "inside" if per is None or t.src // per == t.dst // per else "across"
            switch = max(t.src, t.dst) >= g  # a switch (nvls): its links span the G GPUs
            if switch:
                lv = "inside" if per is None or g <= per else "across"
            wire = model.transfer(lv, n * model.itemsize)
            adds = t.op == "reduce" and t.dst < g  # the switch adds at line rate: no γ
            extra = model.transfer(lv, n * model.itemsize, adds) - wire
            for f in faults:
                if f.kind == "slow-gpu" and t.src == f.gpus[0]:
                    wire /= f.value
                if f.kind == "slow-gpu" and t.dst == f.gpus[0]:
                    extra /= f.value
                if f.kind == "slow-link" and {t.src, t.dst} == set(f.gpus):
                    wire /= f.value
            # A switch has one port per GPU: the one facing the GPU at the link's other end.
            out_port = (t.src, t.dst if t.src >= g else None, lv, "out")
            in_port = (t.dst, t.src if t.dst >= g else None, lv, "in")
            start = max(ready[t.src, t.first:t.last + 1].max(), free.get(out_port, 0.0),
                        free.get(in_port, 0.0), joined[t.src], joined[t.dst])
            free[out_port] = start + wire
            free[in_port] = start + wire + extra
            writes.append((t, start + wire + extra))
            end_all = max(end_all, start + wire + extra)
        for t, end in writes:
            seg = ready[t.dst, t.first:t.last + 1]
            ready[t.dst, t.first:t.last + 1] = np.maximum(seg, end)
    return end_all


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(ALGORITHMS)), st.integers(1, 10), st.integers(1, 4))
def test_without_faults_one_chunk_equals_the_lockstep_model(name, gpus, per_segment):
    plan, model = make_plan(name, gpus), runnable(name, gpus)
    elements = plan.segments * per_segment  # one chunk per segment, all the same size
    if name == "nccl-tree":
        # Its two trees share each node's chain: a chain link queues both trees' chunks in a
        # step, and the engine lets the first one travel on before the second has arrived.
        assert simulate(plan, elements, model).seconds <= price(plan, elements, model).seconds * (1 + 1e-12)
        return
    assert math.isclose(simulate(plan, elements, model).seconds, price(plan, elements, model).seconds,
                        rel_tol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(ALGORITHMS)), st.integers(1, 10), st.integers(0, 60),
       st.sampled_from(["flat", "dgx-h100"]))
def test_never_slower_than_lockstep(name, gpus, elements, topology):
    model = runnable(name, gpus, topology)
    plan = make_plan(name, gpus)
    assert simulate(plan, elements, model).seconds <= price(plan, elements, model).seconds * (1 + 1e-12)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(sorted(ALGORITHMS)), st.integers(2, 9), st.integers(0, 40),
       st.data())
def test_engine_agrees_with_a_sweep_under_faults(name, gpus, elements, data):
    a, b = data.draw(st.lists(st.integers(1, gpus), min_size=2, max_size=2, unique=True))
    faults = (slow_link(f"{a}-{b}:0.25"), slow_gpu(f"{data.draw(st.integers(1, gpus))}:0.5"),
              delay(f"{data.draw(st.integers(1, gpus))}:{data.draw(st.integers(0, 30))}us"))
    model = runnable(name, gpus, data.draw(st.sampled_from(["flat", "dgx-h100"])))
    plan = make_plan(name, gpus)
    got = simulate(plan, elements, model, faults).seconds
    assert math.isclose(got, reference(plan, elements, model, faults), rel_tol=1e-12, abs_tol=1e-18)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(sorted(ALGORITHMS)), st.integers(1, 9), st.integers(0, 40), st.data())
def test_the_step_pass_gives_the_engine_s_times(name, gpus, elements, data):
    a, b = data.draw(st.lists(st.integers(1, max(gpus, 2)), min_size=2, max_size=2, unique=True))
    faults = ((slow_link(f"{a}-{b}:0.4"), slow_gpu(f"{b}:0.5"), delay(f"{a}:3us"))
              if gpus >= 2 else ())
    model = runnable(name, gpus, data.draw(st.sampled_from(["flat", "dgx-h100"])))
    plan = make_plan(name, gpus, **({"chunks": 3} if name in ("tree", "double-tree") else {}))
    events = simulate(plan, elements, model, faults, method="events")
    sweep = simulate(plan, elements, model, faults, method="sweep")
    assert np.array_equal(events.start, sweep.start) and events.seconds == sweep.seconds
    for timeline in (events, sweep):  # each step of the critical path waits for the one before
        path = timeline.critical_path()
        # It ends at the total (ends within float rounding of it arrive together).
        assert not path or math.isclose(timeline.end[path[-1]], timeline.seconds, rel_tol=1e-9)
        assert not path or path[-1] == timeline.last_arrivals()[0]
        for before, after in zip(path, path[1:]):
            assert timeline.cause[after] == before and timeline.start[after] >= timeline.start[before]


@pytest.mark.parametrize("factor", [0.5, 0.25, 0.1])
def test_a_slow_link_stretches_a_bandwidth_bound_ring_by_one_over_f(factor):
    model = CostModel.flat(alpha=0.0, bandwidth=1e9)  # α = 0, γ = 0: bandwidth only
    plan = make_plan("ring", 8)
    healthy = simulate(plan, 8 * 1000, model).seconds
    slow = simulate(plan, 8 * 1000, model, (slow_link(f"3-4:{factor}"),))
    assert math.isclose(slow.seconds, healthy / factor, rel_tol=1e-12)
    # The critical path runs over the slow link at every step.
    on_it = [i for i in slow.critical_path() if {int(slow.src[i]), int(slow.dst[i])} == {2, 3}]
    assert len(on_it) == 2 * 7


def test_slow_gpu_delay_and_fault_costs():
    model = CostModel.flat(alpha=0.0, bandwidth=1e9)
    plan = make_plan("ring", 4)
    healthy = simulate(plan, 4000, model).seconds
    assert math.isclose(simulate(plan, 4000, model, (slow_gpu("2:0.5"),)).seconds, 2 * healthy)
    late = simulate(plan, 4000, model, (delay("3:1ms"),))
    assert math.isclose(late.seconds, healthy + 1e-3)
    both = simulate(plan, 4000, model, (delay("3:1ms"), slow_link("1-2:0.5")))
    costs = {c.fault.kind: c.seconds for c in fault_costs(both)}
    assert math.isclose(costs["delay"], both.seconds - simulate(plan, 4000, model, (slow_link("1-2:0.5"),)).seconds)
    assert costs["slow-link"] > 0


def test_pipelined_chunks_overlap():
    model = CostModel.of("dgx-h100")
    one = simulate(make_plan("double-tree", 16), 1 << 20, model).seconds
    eight = simulate(make_plan("double-tree", 16, chunks=8), 1 << 20, model).seconds
    assert eight < 0.75 * one


def test_route_around():
    order = route_around(6, 0, 1)
    pos = order.index(1), order.index(2)
    assert sorted(order) == list(range(1, 7)) and (pos[0] - pos[1]) % 6 not in (1, 5)
    assert route_around(3, 0, 1) is None


def test_trace_follows_the_trace_event_format():
    timeline = simulate(make_plan("ring", 3), 6, CostModel.of("flat"))
    trace = list(events(timeline))
    complete = [e for e in trace if e["ph"] == "X"]
    meta = [e for e in trace if e["ph"] == "M"]
    assert {e["name"] for e in meta} == {"process_name", "thread_name", "process_sort_index"}
    assert all(isinstance(e["args"]["name"], str) for e in meta if e["name"] != "process_sort_index")
    for e in complete:
        assert set(e) >= {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"}
        assert e["ts"] >= 0 and e["dur"] >= 0 and e["cat"] in ("send", "receive", "reduce")
        assert {"step", "segment", "bytes"} <= set(e["args"])
    # a send and a receive per transfer, a reduce per reduce (flat has γ > 0)
    assert len(complete) == 2 * len(timeline) + int((timeline.ops == 0).sum())


def test_cli_json_and_trace(tmp_path, capsys):
    path = tmp_path / "t.json"
    assert main(["timeline", "--gpus", "4", "-n", "8", "--json", "--trace", str(path)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [x["type"] for x in lines] == ["transfer"] * 24 + ["summary"]
    summary = lines[-1]
    assert math.isclose(summary["seconds"], max(x["end"] for x in lines[:-1]))
    assert math.isclose(summary["seconds"], summary["lockstep_seconds"], rel_tol=1e-12)
    data = json.loads(path.read_text())
    assert data["traceEvents"] and data["displayTimeUnit"] == "ns"


def test_the_switch_is_named_as_walk_names_it_never_as_a_gpu(tmp_path, capsys):
    path = tmp_path / "t.json"
    nvls = ["timeline", "-a", "nvls", "-g", "4", "-n", "8", "--topology", "dgx-h100"]
    assert main([*nvls, "--trace", str(path)]) == 0
    out = capsys.readouterr().out
    assert "GPU5" not in out and "GPU4 → the switch: 1 transfer" in out
    assert out.startswith("Timeline of NVLS (NVLink SHARP) · 4 GPUs")  # the spec's own case
    assert main([*nvls, "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()][:-1]
    assert {(r["dst"], r["dst_name"]) for r in records if r["op"] == "reduce"} == {(5, "the switch")}
    trace = json.loads(path.read_text())["traceEvents"]
    assert "GPU5" not in json.dumps(trace, ensure_ascii=False)
    names = {e["pid"]: e["args"]["name"] for e in trace if e["name"] == "process_name"}
    assert names[5] == "the switch"
    tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace if e["name"] == "thread_name"}
    complete = [e for e in trace if e["ph"] == "X"]
    assert all((e["pid"], e["tid"]) in tracks for e in complete)
    # The switch has a port per GPU: each of its tracks holds one slice at a time.
    ends: dict = {}
    for e in sorted(complete, key=lambda e: e["ts"]):
        key = (e["pid"], e["tid"])
        assert e["ts"] >= ends.get(key, 0.0) - 1e-9, (key, tracks[key])
        ends[key] = e["ts"] + e["dur"]
    assert tracks[(5, 2)] == "receive from GPU1" and tracks[(5, 10)] == "send to GPU4"


def test_nvls_is_not_timed_where_the_switch_does_not_add(capsys):
    # As compare --time and walk --time leave it untimed there, a timeline (all time) refuses.
    for argv in (["timeline", "-a", "nvls", "-g", "4"], ["overlap", "-a", "nvls", "-g", "4"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "NVLS (NVLink SHARP) is not timed on flat at 4 GPUs: " in err
    # Across two DGX H100s the switch that would add is the network's: one node's eight time it.
    assert main(["timeline", "-a", "nvls", "-g", "16", "--topology", "dgx-h100"]) == 2
    assert capsys.readouterr().err.strip().endswith("on dgx-h100 it is timed within one node (at most 8 GPUs)")
    # The Python API gives no time the command line refuses: simulate says the same.
    with pytest.raises(RingsimError, match=r"^NVLS \(NVLink SHARP\) is not timed on flat at 8 GPUs: "):
        simulate(make_plan("nvls", 8), 1_000_000)
    assert simulate(make_plan("nvls", 8), 1_000_000, CostModel.of("dgx-h100")).seconds > 0


def test_a_timeline_prints_one_line_in_a_repl():
    timeline = simulate(make_plan("ring", 8), 1_000_000, CostModel.of("flat"), (slow_gpu("2:0.5"),))
    text = repr(timeline)
    assert "\n" not in text and "array" not in text and len(text) < 120
    assert text.startswith("<Timeline of ring · 8 GPUs · 1,000,000 elements per GPU · 1 fault · ")


def test_cli_text_names_the_path_and_the_lesson(capsys):
    assert main(["timeline", "--gpus", "6", "-n", "6000", "--slow-link", "1-2:0.5"]) == 0
    out = capsys.readouterr().out
    assert "link GPU1–GPU2 at 0.5× speed: +" in out
    assert "GPU1 → GPU2: 10 transfers" in out
    assert "two rings, the second around the slow link" in out


@pytest.mark.parametrize("argv", [["--slow-link", "1-1:0.5"], ["--slow-gpu", "2:0"], ["--slow-gpu", "1:1e-300"], ["--slow-link", "1-2:1e9"],
                                  ["--delay", "2:5"], ["--slow-link", "x"]])
def test_cli_bad_faults_one_line(argv, capsys):
    assert main(["timeline", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err


@pytest.mark.parametrize("argv, message", [
    (["--delay", "3:10"], "argument --delay: '10' needs a unit: s, ms, us (µs) or ns"),
    (["--delay", "3:1xs"], "argument --delay: unknown unit 'xs' in '1xs'; use s, ms, us (µs) or ns"),
    (["--slow-gpu", "2:abc"], "argument --slow-gpu: expected a speed factor such as 0.5, got 'abc'")])
def test_cli_bad_faults_say_which_value_is_wrong(argv, message, capsys):
    assert main(["timeline", *argv]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"ringsim timeline: error: {message}"


def test_cli_fault_outside_the_gpus(capsys):
    assert main(["timeline", "--gpus", "4", "--slow-gpu", "9:0.5"]) == 2
    assert capsys.readouterr().err == "ringsim timeline: error: --slow-gpu 9:0.5: GPU 9 is outside 1..4\n"


@pytest.mark.parametrize("fault, words", [
    (("slow-gpu", (0,), 1e-300), "--slow-gpu 1:1e-300: the speed factor must be from 0.000001"),
    (("slow-link", (0, 1), -1.0), "--slow-link 1-2:-1: the speed factor must be from 0.000001"),
    (("delay", (1,), float("nan")), "--delay 2:nan: a delay must be from 0 to 1,000,000 s"),
    (("slowgpu", (0,), 0.5), "a fault is slow-gpu, slow-link or delay, got 'slowgpu'")])
def test_api_faults_out_of_range_are_refused(fault, words):
    from ringsim.timeline import Fault, simulate
    with pytest.raises(RingsimError) as error:
        simulate(make_plan("ring", 4), 8, CostModel.of("flat"), (Fault(*fault),))
    assert str(error.value).startswith(words)


def test_the_help_says_when_the_events_and_the_lockstep_model_differ(capsys):
    # Pipelined chunks are the one case: the double tree's ports queue both trees' chunks.
    from ringsim.cli import main
    for name in sorted(ALGORITHMS):
        plan = make_plan(name, 8)
        model = CostModel.of("dgx-h100" if unavailable(name, CostModel(), 8) else "flat")
        if name == "nccl-tree":  # both trees on each node's chain: the events overlap them
            assert simulate(plan, 1 << 24, model).seconds < price(plan, 1 << 24, model).seconds
            continue
        assert math.isclose(simulate(plan, 1 << 24, model).seconds, price(plan, 1 << 24, model).seconds,
                            rel_tol=1e-12), name
    piped = make_plan("double-tree", 8, chunks=4)
    assert simulate(piped, 1 << 24).seconds > price(piped, 1 << 24).seconds * 1.1
    assert main(["timeline", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "with one chunk (the default), the total equals the lockstep model" in text
    assert "aside: its two trees share each node's chain" in text
    assert "With --chunks C > 1" in text and "later (double-tree" in text
    assert main(["timeline", "-a", "double-tree", "--chunks", "4"]) == 0
    assert "which pipelined chunks do not follow: see --help" in capsys.readouterr().out
    assert main(["timeline", "-a", "double-tree"]) == 0
    assert "do not follow" not in capsys.readouterr().out


def test_a_symmetric_plan_names_the_first_of_the_chains_that_tie():
    model = CostModel.flat(alpha=5e-6, bandwidth=1e9)
    ring = simulate(make_plan("ring", 4), 16, model)
    last = ring.last_arrivals()
    # The ring's last step: each GPU's last arrival ends a chain as long as the total.
    assert len(last) == 4 and all(ring.end[i] == ring.seconds for i in last)
    assert set(ring.step[last].tolist()) == {len(ring.plan.steps) - 1}
    assert ring.critical_path()[-1] == last[0] == min(last)
    lines = path_lines(ring)
    assert lines[:2] == ["Critical path: 6 transfers, the chain of waits that sets the total.",
                         "(One of 4 chains that end together, the first in plan order.)"]
    # A slow GPU breaks the symmetry: one chain ends last, and nothing is said of ties.
    slow = simulate(make_plan("ring", 4), 16, model, (slow_gpu("2:0.5"),))
    assert len(slow.last_arrivals()) == 1 and not path_lines(slow)[1].startswith("(One of")


def test_ends_apart_by_float_rounding_alone_arrive_together():
    ring = simulate(make_plan("ring", 4), 16, CostModel.flat(alpha=5e-6, bandwidth=1e9))
    last = ring.last_arrivals()
    nudged = dataclasses.replace(ring, end=ring.end.copy())
    nudged.end[last[0]] *= 1 - 1e-15  # as another order of additions could leave it
    assert nudged.last_arrivals().tolist() == last.tolist()
    assert nudged.critical_path() == ring.critical_path()


def test_json_summary_counts_the_chains_that_tie(capsys):
    assert main(["timeline", "-g", "4", "-n", "16", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert summary["critical_path_ties"] == 4 and len(summary["critical_path"]) == 6
    assert main(["timeline", "-g", "4", "-n", "16", "--slow-gpu", "2:0.5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["critical_path_ties"] == 1


@pytest.mark.parametrize("flag", ["--slow-link 1-2:0.5", "--slow-gpu 3:0.25", "--delay 2:100us",
                                  "--delay 2:250ms", "--delay 4:3s", "--delay 1:0.002us"])
def test_a_fault_writes_itself_as_the_command_line_reads_it(flag):
    from ringsim.timeline import faults
    option, text = flag.split()
    fault = {"--slow-link": faults.slow_link, "--slow-gpu": faults.slow_gpu,
             "--delay": faults.delay}[option](text)
    assert fault.flag() == flag


def test_a_slow_gpu_on_the_ring_by_hand(tmp_path, capsys):
    """Ring of 4 on flat (alpha 5 us, 100 GB/s, reduce 1 TB/s), 4,000,000 float32 per GPU, GPU2
    at half speed. By hand from docs/timeline.md's rules: a segment is 1,000,000 elements =
    4 MB; a healthy send is 5 + 40 = 45 us, a reduce 4 us. GPU2 sends at half speed, 90 us,
    and every step waits on it: 3 reduce-scatter sends of 90 + 4 (GPU3 adds at full speed)
    and 3 all-gather sends of 90, 552 us in all; healthy, 3 x 49 + 3 x 45 = 282 us."""
    path = tmp_path / "slow.json"
    argv = ["timeline", "-g", "4", "-n", "4000000", "--slow-gpu", "2:0.5"]
    assert main([*argv, "--json", "--trace", str(path)]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert summary["seconds"] == pytest.approx(552e-6, rel=1e-12)
    assert summary["lockstep_seconds"] == pytest.approx(282e-6, rel=1e-12)
    assert summary["faults"][0]["seconds"] == pytest.approx(270e-6, rel=1e-12)
    # The trace: one process per GPU, ts and dur in microseconds; each track sums by hand.
    spans = {}
    for e in json.loads(path.read_text())["traceEvents"]:
        if e["ph"] == "X":
            spans[(e["pid"], e["cat"])] = spans.get((e["pid"], e["cat"]), 0.0) + e["dur"]
    assert {pid for pid, _ in spans} == {1, 2, 3, 4}
    assert spans[(2, "send")] == pytest.approx(6 * 90)      # the slow GPU's 6 sends
    assert spans[(3, "receive")] == pytest.approx(6 * 90)   # what GPU3 receives from it
    assert spans[(1, "send")] == pytest.approx(6 * 45)
    assert spans[(2, "reduce")] == pytest.approx(3 * 8)     # GPU2 adds at half speed too
    assert spans[(3, "reduce")] == pytest.approx(3 * 4)
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Total: 552.00 µs (lockstep model without faults: 282.00 µs)" in out
    assert "GPU2 → GPU3: 6 transfers, 552.00 µs of it" in out
