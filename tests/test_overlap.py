"""Overlap: DDP's buckets, the events of one step, the presets' sizes, the command."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given, settings, strategies as st

from ringsim import RingsimError
from ringsim.cli import main
from ringsim.algorithms.timing import estimate
from ringsim.cost.model import CostModel
from ringsim.training.models import Layer, Model, llama_7b, parse_layers, resnet_50
from ringsim.training.overlap import MIB, assign_buckets, simulate


def model_of(sizes, flops=1e6):
    return Model("t", "test", tuple(Layer(f"l{i}", (s,), flops * s) for i, s in enumerate(sizes)), "x", 1)


def test_buckets_as_ddp_assigns_them():
    # From the second step on, DDP's buckets are the ones Reducer::rebuild_buckets made
    # (torch/csrc/distributed/c10d/reducer.cpp): compute_bucket_assignment_by_size over the
    # parameters in the order their gradients became ready (last defined first here), with
    # limits [first_bucket_bytes (1 MiB), bucket_bytes_cap], and not reversed after: the
    # small bucket holds the gradients ready first and is launched first (the environment
    # variable DDP_SET_LAST_BUCKET_CAP=1 is what would move it last).
    # float32: 262,144 elements are 1 MiB; the cap 10 MiB is 2,621,440 elements. By hand, from
    # the last tensor: 10 + 7,000,000 >= 262,144 closes bucket 1 (layers 6-7); 100,000 +
    # 3,000,000 >= 2,621,440 closes bucket 2 (layers 4-5); the rest, 600,000, is bucket 3.
    m = model_of([100_000, 200_000, 300_000, 3_000_000, 100_000, 7_000_000, 10])
    assert assign_buckets(m, 10 * MIB, 4) == [(5, 6, 7_000_010), (3, 4, 3_100_000), (0, 2, 600_000)]


def test_the_small_first_bucket_is_launched_first():
    """Four layers of 1 MiB (float32) on 2 GPUs of the flat machine (alpha 5 us, 100 GB/s, reduce
    1 TB/s), bucket cap 5 MiB. DDP's rebuilt buckets (reducer.cpp, see above): the last layer,
    ready first, fills the 1 MiB first bucket; layers 3, 2, 1 share the second, launched when
    layer 1's backward ends, so the whole of it is exposed.
    Its all-reduce by hand (2-GPU ring, Thakur et al. 2005): 3 MiB = 3,145,728 bytes cut in 2,
    two steps of alpha + 1,572,864 B / 100 GB/s = 5 + 15.72864 us, plus one reduce of
    1,572,864 B at 1 TB/s = 1.572864 us: 43.030144 us."""
    m = model_of([262_144] * 4)
    step = simulate(m, 2, CostModel.of("flat"), bucket_mb=5, flops=1e12)
    assert [(b.lo, b.hi, b.elements) for b in step.buckets] == [(3, 3, 262_144), (0, 2, 786_432)]
    assert step.exposed_seconds == pytest.approx(43.030144e-6, rel=1e-9)


def test_presets_have_their_published_sizes():
    assert llama_7b().params == 6_738_415_616  # Llama 2 7B
    r = resnet_50()
    assert r.params == 25_557_032  # torchvision resnet50
    assert math.isclose(sum(layer.flops for layer in r.layers) / 2, 4.09e9, rel_tol=0.01)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 3_000_000), min_size=1, max_size=30), st.floats(0.5, 100),
       st.integers(2, 64), st.floats(1e9, 1e15))
def test_events_match_the_recurrence(sizes, bucket_mb, gpus, flops):
    """Independent of the engine: bucket k starts at max(its last layer ready, the previous end)."""
    m, cost = model_of(sizes), CostModel.of("flat")
    got = simulate(m, gpus, cost, bucket_mb=bucket_mb, flops=flops)
    forward = [layer.flops / flops for layer in m.layers]
    t, done = sum(forward), [0.0] * len(sizes)
    for i in range(len(sizes) - 1, -1, -1):
        t += 2 * forward[i]
        done[i] = t
    clock = 0.0
    for lo, hi, elements in assign_buckets(m, bucket_mb * MIB, 4):  # in launch order
        clock = max(done[lo], clock) + estimate("ring", gpus, elements, cost).seconds
    assert math.isclose(got.step_seconds, max(clock, t), rel_tol=1e-9)
    assert got.exposed_seconds >= -1e-15


def test_free_network_hides_everything_and_slow_compute_hides_more():
    m = llama_7b()
    free = CostModel.flat(alpha=0.0, bandwidth=math.inf)
    step = simulate(m, 8, free)
    assert step.exposed_seconds == 0
    assert math.isclose(step.step_seconds, step.forward_seconds + step.backward_seconds, rel_tol=1e-12)
    cost = CostModel.of("dgx-h100")
    fast, slow = simulate(m, 16, cost, flops=1e18), simulate(m, 16, cost, flops=1e13)
    assert fast.exposed_seconds > slow.exposed_seconds
    assert math.isclose(fast.step_seconds, fast.communication_seconds, rel_tol=0.01)


def test_layers_spec():
    m = parse_layers("1M,3x2M")
    assert [layer.params for layer in m.layers] == [1_000_000] + [2_000_000] * 3
    for bad in ("", "3x", "0x5M", "abc"):
        with pytest.raises(RingsimError):
            parse_layers(bad)


def test_cli_overlap(capsys):
    assert main(["overlap", "--model", "resnet-50", "--topology", "dgx-h100", "--nodes", "2",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["params"] == 25_557_032 and data["step_seconds"] > data["exposed_seconds"] > 0
    assert data["best_bucket_mb"] == min(data["sweep"], key=lambda r: r["step_seconds"])["bucket_mb"]
    assert main(["overlap", "--layers", "4x10M", "--gpus", "4"]) == 0
    assert "Best bucket size" in capsys.readouterr().out
    assert main(["overlap", "--layers", "4xQ"]) == 2
    assert main(["overlap", "--bucket-mb", "0"]) == 2


def test_trace_has_one_stream(tmp_path, capsys):
    path = tmp_path / "o.json"
    assert main(["overlap", "--model", "resnet-50", "--trace", str(path)]) == 0
    events = json.loads(path.read_text())["traceEvents"]
    comm = sorted((e for e in events if e.get("cat") == "communication"), key=lambda e: e["ts"])
    compute = [e for e in events if e.get("cat") == "compute"]
    assert len(compute) == 1 + len(resnet_50().layers) and comm
    for before, after in zip(comm, comm[1:]):  # one stream: no two all-reduces at once
        assert after["ts"] >= before["ts"] + before["dur"] - 1e-6
    assert all(e["ts"] >= e["args"]["ready"] - 1e-6 for e in comm)


def test_a_layers_tensors_are_ready_one_by_one_in_reverse_order():
    """The rule, by hand: autograd finishes a layer's last tensor first; the layer's backward time is
    split by elements; a bucket is ready when all its gradients are (DDP's Reducer)."""
    big = 1 << 18  # 1 MiB of float32: every tensor closes its own bucket
    sizes = ((big, 3 * big), (2 * big, 2 * big))
    m = Model("t", "test", tuple(Layer(f"l{i}", s, 1e6 * sum(s)) for i, s in enumerate(sizes)), "x", 1)
    cost = CostModel.of("flat")
    step = simulate(m, 4, cost, bucket_mb=1, flops=1e12)
    f = [1e6 * sum(s) / 1e12 for s in sizes]
    start = f[0] + f[1]                       # the forward pass
    end1 = start + 2 * f[1]                   # layer 2's backward, then layer 1's
    end0 = end1 + 2 * f[0]
    want = [start + 2 * f[1] * (2 * big) / (4 * big),   # layer 2's second tensor first
            end1,                                        # then its first, as the layer ends
            end1 + 2 * f[0] * (3 * big) / (4 * big),     # layer 1's second tensor
            end0]                                        # its first: the backward pass ends
    got = sorted((b.ready, b.lo, b.elements) for b in step.buckets)
    assert [r for r, _, _ in got] == pytest.approx(want, rel=1e-12)
    assert [(lo, el) for _, lo, el in got] == [(1, 2 * big), (1, 2 * big), (0, 3 * big), (0, big)]
    assert step.computed == pytest.approx(end0, rel=1e-12)
    # The first all-reduce starts before its layer's backward ends.
    assert step.buckets[0].start < end1
    # Filled in ready order (layer 2's tensors, then layer 1's, last defined first), launched so.
    assert assign_buckets(m, MIB, 4) == [(1, 1, 2 * big), (1, 1, 2 * big), (0, 0, 3 * big), (0, 0, big)]


def test_a_bucket_that_ends_inside_a_layer_waits_for_all_its_gradients():
    # Cap 2 MiB: bucket 2 holds layer 1's second tensor and layer 2's first one; it is ready when
    # the later of the two is, layer 1's second tensor (layer 1's backward runs after layer 2's).
    big = 1 << 18
    m = Model("t", "test", (Layer("a", (big, big), 2e6 * big), Layer("b", (big, big), 2e6 * big)), "x", 1)
    step = simulate(m, 2, CostModel.of("flat"), bucket_mb=2, flops=1e12)
    spans = sorted((b.lo, b.hi, b.elements) for b in step.buckets)
    assert spans == [(0, 0, big), (0, 1, 2 * big), (1, 1, big)]
    d = 2 * 2e6 * big / 1e12          # each layer's backward
    start = 2 * 2e6 * big / 1e12      # after the forward pass
    middle = next(b for b in step.buckets if (b.lo, b.hi) == (0, 1))
    assert middle.ready == pytest.approx(start + d + d / 2, rel=1e-12)


def test_communication_survives_a_step_of_astronomical_compute():
    """At 1e-30 TFLOP/s the backward pass takes ~1e32 s; each all-reduce still counts its own time."""
    cost = CostModel.of("flat")
    step = simulate(llama_7b(), 8, cost, flops=1e-18)
    assert step.computed > 1e30
    expected = math.fsum(estimate("ring", 8, b.elements, cost).seconds for b in step.buckets)
    assert step.communication_seconds == pytest.approx(expected, rel=1e-12)
    assert step.communication_seconds > 0.1


# --- the ring's layout: --ring-order / --channels, and NCCL's rails beside the plain ring ----

def _overlap_json(capsys, *extra):
    assert main(["overlap", "--model", "resnet-50", "--topology", "dgx-h100", "--nodes", "2",
                 "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_ring_order_prices_every_bucket_on_the_rails(capsys):
    cost = CostModel.of("dgx-h100")
    data = _overlap_json(capsys, "--ring-order", "rails:8")
    assert data["gpus"] == 16 and data["options"] == {"ring_order": "rails:8"}
    assert data["rails"] is None  # the layout was given: no note
    each = [estimate("ring", 16, b["elements"], cost, ring_order="rails:8").seconds
            for b in data["buckets"]]
    assert data["communication_seconds"] == pytest.approx(math.fsum(each), rel=1e-12)
    for b, seconds in zip(data["buckets"], each):
        assert b["end"] - b["start"] == pytest.approx(seconds, rel=1e-9)
    plain = _overlap_json(capsys)
    assert plain["options"] == {}
    ring = math.fsum(estimate("ring", 16, b["elements"], cost).seconds for b in plain["buckets"])
    assert plain["communication_seconds"] == pytest.approx(ring, rel=1e-12)
    assert data["communication_seconds"] < plain["communication_seconds"] / 3


def test_the_note_gives_the_rails_ring_on_the_same_buckets(capsys):
    from ringsim.core.units import format_seconds
    cost = CostModel.of("dgx-h100")
    plain = _overlap_json(capsys)
    rails = _overlap_json(capsys, "--ring-order", "rails:8")
    note = plain["rails"]
    assert note["ring_order"] == "rails:8"
    expected = math.fsum(estimate("ring", 16, b["elements"], cost, ring_order="rails:8").seconds
                         for b in plain["buckets"])
    assert note["communication_seconds"] == pytest.approx(expected, rel=1e-12)
    for key in ("communication_seconds", "exposed_seconds", "step_seconds"):
        assert note[key] == rails[key]
    step = simulate(resnet_50(), 16, cost, options={"ring_order": "rails:8"})
    assert note["exposed_seconds"] == step.exposed_seconds
    assert main(["overlap", "--model", "resnet-50", "--topology", "dgx-h100", "--nodes", "2"]) == 0
    out = capsys.readouterr().out
    assert ", ring all-reduce each, one stream" in out
    (line,) = [x for x in out.splitlines() if "one per NIC" in x]
    assert (f"--ring-order rails:8 gives {format_seconds(note['communication_seconds'])} of "
            f"communication, {format_seconds(note['exposed_seconds'])} exposed, step "
            f"{format_seconds(note['step_seconds'])};") in line
    assert main(["overlap", "--model", "resnet-50", "--topology", "dgx-h100", "--nodes", "2",
                 "--ring-order", "rails:8"]) == 0
    out = capsys.readouterr().out
    assert ", ring all-reduce (ring order rails:8) each, one stream" in out
    assert "one per NIC" not in out
    assert f"Communication {format_seconds(note['communication_seconds'])}:" in out


@pytest.mark.parametrize("flags", [
    ["--topology", "dgx-h100", "-g", "8"],                          # one node: the same ring
    ["--gpus", "16"],                                               # flat: no nodes
    ["--topology", "dgx-h100", "--nodes", "2", "-a", "hierarchical"],
    ["--topology", "dgx-h100", "--nodes", "2", "--channels", "2"],  # a layout was given
])
def test_no_note_where_nccl_lays_out_nothing_else(capsys, flags):
    assert main(["overlap", "--model", "resnet-50", "--json", *flags]) == 0
    assert json.loads(capsys.readouterr().out)["rails"] is None


def test_channels_reach_the_estimate(capsys):
    cost = CostModel.of("dgx-h100")
    data = _overlap_json(capsys, "--channels", "4")
    assert data["options"] == {"channels": 4}
    expected = math.fsum(estimate("ring", 16, b["elements"], cost, channels=4).seconds
                         for b in data["buckets"])
    assert data["communication_seconds"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("flags, message", [
    (["-a", "tree", "--ring-order", "rails:8"], "tree takes --chunks, not --ring-order (--ring-order is for ring)"),
    (["--chunks", "2"], "ring takes --channels, --ring-order, not --chunks "
                        "(--chunks is for tree, double-tree, nccl-tree, nvls)"),
    (["-a", "hierarchical", "--channels", "2"], "hierarchical takes --nodes, not --channels "
                                                "(--channels is for ring)"),
])
def test_an_option_the_algorithm_does_not_take_is_refused_in_one_line(capsys, flags, message):
    from ringsim.algorithms import check_options
    assert main(["overlap", "--model", "resnet-50", "--topology", "dgx-h100", "--nodes", "2",
                 *flags]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"ringsim overlap: error: {message}\n"
    # the registry's own words, which compare, walk and timeline print (naming the flags there)
    from ringsim.core.arguments import as_flag, naming
    name = flags[flags.index("-a") + 1] if "-a" in flags else "ring"
    option = flags[-2].lstrip("-").replace("-", "_")
    with naming(as_flag), pytest.raises(RingsimError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_options(name, 16, {option: flags[-1]})


def test_an_empty_layer_spec_and_a_huge_micro_batch_are_refused_in_one_line(capsys):
    from ringsim.cli import main
    assert main(["overlap", "--layers", ""]) == 2
    assert "--layers is empty" in capsys.readouterr().err
    assert main(["overlap", "--micro-batch", "1e12"]) == 2
    err = capsys.readouterr().err.strip()
    assert "the micro-batch must be from 1 to 1,000,000,000" in err and len(err.splitlines()) == 1
    # counts take the 1e3 form as every other count does: 1,000 samples, not 1
    import json
    runs = []
    for batch in ("1e3", "1000"):
        assert main(["overlap", "--model", "resnet-50", "--micro-batch", batch, "--json"]) == 0
        runs.append(json.loads(capsys.readouterr().out.splitlines()[0])["forward_seconds"])
    assert runs[0] == runs[1] > 0


def test_a_tie_for_the_best_bucket_is_named_as_a_range(capsys):
    from ringsim.cli import main
    assert main(["overlap", "--model", "llama-7b", "-a", "recursive-doubling", "-g", "2"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.strip().endswith(("ms", "µs", "best"))
            and line.strip()[0].isdigit()]
    steps = {f"{r[0]} {r[1]}": float(r[3]) for r in rows}
    # 100 and 250 MiB are within a part in a thousand of each other, 50 and 1000 MiB are not;
    # the sentence names that range, not one size
    assert math.isclose(steps["100 MiB"], steps["250 MiB"], rel_tol=1e-3)
    assert not math.isclose(steps["50 MiB"], steps["250 MiB"], rel_tol=1e-3)
    assert not math.isclose(steps["1000 MiB"], steps["250 MiB"], rel_tol=1e-3)
    assert "Best bucket size: 250 MiB (from 100 MiB to 250 MiB the step is the same" in out
    # of the tied sizes, the one that launches the fewest all-reduces is named, with its count
    fewest = min((r for r in rows if f"{r[0]} {r[1]}" in ("100 MiB", "250 MiB")), key=lambda r: int(r[2]))
    assert f"{fewest[0]} {fewest[1]} launches the fewest all-reduces, {fewest[2]})" in out


def test_the_rails_note_gives_the_best_bucket_of_the_rails_layout(capsys):
    import json
    from ringsim.cli import main
    from ringsim.cost.model import CostModel
    from ringsim.training.models import model as preset
    from ringsim.training.overlap import SWEEP_MB, best, sweep
    argv = ["overlap", "--model", "llama-7b", "--topology", "dgx-h100", "--nodes", "2"]
    assert main([*argv, "--json"]) == 0
    rails = json.loads(capsys.readouterr().out)["rails"]
    cost = CostModel.of("dgx-h100", "float32")
    runs = sweep(preset("llama-7b"), 16, cost, sorted(set(SWEEP_MB) | {25.0}),
                 algorithm="ring", options={"ring_order": "rails:8"}, flops=400e12, batch=None)
    expected = best(runs)
    assert rails["best_bucket_mb"] == expected.bucket_mb
    assert rails["best_step_seconds"] == expected.step_seconds
    assert main(argv) == 0
    assert f"the best is buckets of {int(expected.bucket_mb)} MiB (step" in capsys.readouterr().out


def test_the_uncapped_row_says_no_cap_and_why_it_has_two_buckets(capsys):
    # DDP closes its first bucket at 1 MiB whatever bucket_cap_mb is, so "no cap" is two
    # buckets for a model above 1 MiB; the row must not call itself one bucket.
    assert main(["overlap", "--layers", "4x10M", "--gpus", "4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    uncapped = next(r for r in data["sweep"] if r["bucket_mb"] is None)
    assert uncapped["buckets"] == 2
    assert main(["overlap", "--layers", "4x10M", "--gpus", "4"]) == 0
    out = capsys.readouterr().out
    assert "one bucket" not in out.split("Bucket size sweep:")[1].split("Best")[0]
    row = next(line for line in out.splitlines() if line.strip().startswith("no cap "))
    assert row.split()[:3] == ["no", "cap", "2"]
    assert ("  no cap: bucket_cap_mb without a limit; DDP's first bucket of 1 MiB, then one "
            "for the rest (2 buckets)") in out
    # A model that fits the first bucket is one bucket indeed, and is said so.
    assert main(["overlap", "--layers", "100K,100K", "--gpus", "4"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.strip().startswith("no cap "))
    assert row.split()[2] == "1"
    assert "  no cap: bucket_cap_mb without a limit; the whole model in one bucket\n" in out


def test_the_rails_note_names_the_uncapped_best_as_two_buckets(capsys):
    # Eight 10M-parameter layers (one sample: next to no compute to hide under) on two DGX H100
    # laid out as NCCL's rings: the fewest all-reduces win, so the best is no cap, two buckets.
    argv = ["overlap", "--layers", "8x10M", "--topology", "dgx-h100", "--nodes", "2"]
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rails"]["best_bucket_mb"] is None
    assert main(argv) == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert ("laid out so, the best is no bucket cap (DDP's first bucket of 1 MiB, then one for "
            "the rest; step ") in flat
    assert "one bucket for the whole model" not in flat


@pytest.mark.parametrize("kwargs, says", [
    ({"gpus": 0}, "the number of GPUs must be from 1"),
    ({"bucket_mb": -1}, "bucket_mb must be above 0 MiB (math.inf for no cap), got -1"),
    ({"bucket_mb": math.nan}, "bucket_mb must be above 0 MiB (math.inf for no cap), got nan"),
    ({"bucket_mb": "25"}, "bucket_mb must be above 0 MiB (math.inf for no cap), got '25'"),
    ({"flops": 0}, "flops must be a finite number above 0 FLOP/s per GPU, got 0"),
    ({"flops": math.inf}, "flops must be a finite number above 0 FLOP/s per GPU, got inf"),
    ({"batch": 0}, "the micro-batch must be from 1"),
])
def test_the_python_api_refuses_what_the_command_line_refuses(kwargs, says):
    """overlap.simulate and sweep answered a step for 0 GPUs, a negative or NaN bucket cap and
    a batch of 0, and raised ZeroDivisionError or TypeError for flops=0 or a cap given as text."""
    from ringsim.training.overlap import sweep
    args = {"gpus": 4, **kwargs}
    gpus = args.pop("gpus")
    with pytest.raises(RingsimError, match=re.escape(says)):
        simulate(resnet_50(), gpus, CostModel.of("flat"), **args)
    args.pop("bucket_mb", None)
    if kwargs.keys() != {"bucket_mb"}:
        with pytest.raises(RingsimError, match=re.escape(says)):
            sweep(resnet_50(), gpus, CostModel.of("flat"), **args)
