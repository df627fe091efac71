"""walk --time / --topology: each step's modelled time, bottleneck and clock, as a user runs it."""

import json
import math
import os
import subprocess
import sys

import pytest

from ringsim.algorithms import make_plan
from ringsim.cli import main
from ringsim.cost.model import CostModel, price


def run(argv, capsys):
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def records(out):
    lines = [json.loads(line) for line in out.splitlines()]
    return [r for r in lines if r["type"] == "step"], lines[-1]


@pytest.mark.parametrize("algorithm", ["ring", "tree", "halving-doubling", "hierarchical",
                                       "master", "bidirectional-ring"])
def test_step_times_sum_to_the_priced_plan(capsys, algorithm):
    status, out, _ = run(["walk", "--json", "-a", algorithm, "--topology", "dgx-h100",
                          "--nodes", "2", "--elements", "1000"], capsys)
    assert status == 0
    steps, summary = records(out)
    options = {"nodes": 2} if algorithm == "hierarchical" else {}
    cost = price(make_plan(algorithm, 16, **options), 1000, CostModel.of("dgx-h100"))
    assert [s["seconds"] for s in steps] == [c.seconds for c in cost.steps]
    assert math.isclose(math.fsum(s["seconds"] for s in steps), cost.seconds, rel_tol=1e-12)
    assert math.isclose(steps[-1]["clock_seconds"], cost.seconds, rel_tol=1e-12)
    assert all(b["clock_seconds"] >= a["clock_seconds"] for a, b in zip(steps, steps[1:]))
    assert summary["seconds"] == cost.seconds and summary["gpus"] == 16
    assert summary["bytes_per_gpu"] == 4000 and summary["topology"] == "dgx-h100"
    assert math.isclose(summary["algbw"], 4000 / cost.seconds, rel_tol=1e-12)
    assert math.isclose(summary["busbw"], summary["algbw"] * 2 * 15 / 16, rel_tol=1e-12)


def test_the_ring_on_the_flat_topology_takes_the_textbook_time(capsys):
    # Thakur, Rabenseifner & Gropp 2005: 2(p−1)α + 2(p−1)/p·nβ + (p−1)/p·nγ (p | n).
    p, n_elements, alpha, bw, reduce = 4, 1024, 2e-6, 10e9, 20e9
    _, out, _ = run(["walk", "--json", "--gpus", str(p), "--elements", str(n_elements),
                     "--alpha", "2us", "--bandwidth", "10GB/s", "--reduce-bandwidth", "20GB/s"],
                    capsys)
    steps, summary = records(out)
    n = 4 * n_elements
    textbook = 2 * (p - 1) * alpha + 2 * (p - 1) / p * n / bw + (p - 1) / p * n / reduce
    assert math.isclose(summary["seconds"], textbook, rel_tol=1e-12)
    # Reduce-scatter steps carry the reduce's γ; all-gather steps do not.
    assert math.isclose(steps[0]["seconds"], alpha + n / p / bw + n / p / reduce, rel_tol=1e-12)
    assert math.isclose(steps[-1]["seconds"], alpha + n / p / bw, rel_tol=1e-12)


def test_the_bottleneck_is_named_in_words(capsys):
    _, out, _ = run(["walk", "--json", "--topology", "dgx-h100", "--nodes", "2", "-n", "1600"],
                    capsys)
    steps, summary = records(out)
    # The ring's two node-crossing links (GPU8→GPU9, GPU16→GPU1) are the slow InfiniBand
    # ones; receivers also reduce, and ties go to the lowest GPU: GPU1 receiving.
    assert steps[0]["bottleneck"] == {
        "gpu": 1, "level": "across", "direction": "in", "link": "InfiniBand NDR 400 Gb/s",
        "words": "GPU1 receiving across nodes (InfiniBand NDR 400 Gb/s)"}
    assert summary["bottleneck_level"] == "across"
    _, text, _ = run(["walk", "--topology", "dgx-h100", "--nodes", "2", "-n", "1600"], capsys)
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith("time ")]
    assert len(lines) == 30  # one per step: 2·(G−1)
    assert lines[0].startswith("time ") and "· bottleneck GPU1 receiving across nodes " \
        "(InfiniBand NDR 400 Gb/s), as busy: GPU9 · clock " in lines[0]
    assert steps[0]["bottleneck_gpus"] == [1, 9] and not steps[0]["ports_evenly_loaded"]
    assert "Modelled time on dgx-h100 · 16 GPUs in 2 nodes · 6,400B per GPU" in text
    assert "the bottleneck port was across nodes 100% of the time" in text
    assert "busbw = algbw·2(G−1)/G" in text


def test_flat_bottleneck_words_and_the_inside_link(capsys):
    _, out, _ = run(["walk", "--json", "--time", "-a", "tree"], capsys)
    steps, _ = records(out)
    # GPU2 and GPU4 both send to GPU3: its in port queues two transfers.
    assert steps[0]["bottleneck"]["words"] == "GPU3 receiving (one switch)"
    assert steps[0]["bottleneck_gpus"] == [3]
    _, out, _ = run(["walk", "--json", "--topology", "dgx-h100", "--gpus", "8", "-a", "master"],
                    capsys)
    steps, _ = records(out)
    assert steps[0]["bottleneck"]["words"] == "GPU1 receiving inside a node (NVLink 4 via NVSwitch)"


@pytest.mark.parametrize("argv", [[], ["-a", "bidirectional-ring"],
                                  ["-a", "nvls", "--topology", "dgx-h100", "--gpus", "8"],
                                  ["--topology", "dgx-h100", "--gpus", "8"]],
                         ids=lambda v: " ".join(v) or "ring")
def test_a_symmetric_step_names_no_bottleneck_gpu(capsys, argv):
    # Every GPU's ports carry the same load: the tie rule's GPU1 holds nothing up, so the walk
    # says so, as the TUI, serve and export do (cost.ports.bottleneck_gpus).
    _, out, _ = run(["walk", "--json", "--time", *argv], capsys)
    steps, _ = records(out)
    assert all(s["bottleneck"] is None and s["bottleneck_gpus"] == [] and s["ports_evenly_loaded"]
               for s in steps)
    _, text, _ = run(["walk", "--time", *argv], capsys)
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith("time ")]
    assert len(lines) == len(steps) and all("· ports evenly loaded" in line and "bottleneck"
                                             not in line for line in lines)


def test_size_and_dtype_set_the_elements_and_bytes(capsys):
    _, out, _ = run(["walk", "--json", "--size", "64KiB", "--dtype", "bfloat16"], capsys)
    _, summary = records(out)
    assert summary["elements_per_gpu"] == 32768 and summary["bytes_per_gpu"] == 65536
    assert summary["dtype"] == "bfloat16" and summary["dtype_bytes"] == 2
    _, text, _ = run(["walk", "--dtype", "bfloat16", "--time"], capsys)
    assert "bfloat16 has no NumPy type: the walk adds small integers, priced as 2-byte elements." \
        in text


def test_nodes_set_g_and_hierarchical_follows_them(capsys):
    _, out, _ = run(["walk", "--json", "-a", "hierarchical", "--topology", "dgx-h100",
                     "--nodes", "2", "-n", "1600"], capsys)
    steps, summary = records(out)
    assert summary["gpus"] == 16
    assert steps[0]["phase"] == "Reduce-scatter inside each node"
    assert all(s["bottleneck_level"] == "inside" for s in steps[:7])  # 8 GPUs per node
    assert all(s["bottleneck_level"] == "across" for s in steps[7:9])


def test_no_time_fields_without_a_time_option(capsys):
    _, out, _ = run(["walk", "--json"], capsys)
    steps, summary = records(out)
    assert "seconds" not in steps[0] and "seconds" not in summary
    _, text, _ = run(["walk"], capsys)
    assert "Modelled time" not in text


@pytest.mark.parametrize("argv, message", [
    (["--alpha", "5parsecs"], "--alpha: unknown unit 'parsecs' in '5parsecs'"),
    (["--bandwidth", "5"], "--bandwidth: unknown unit '' in '5'"),
    (["--size", "3B"], "--size 3B is not a whole number of float32 elements (4 bytes each)"),
    (["--size", "1XB"], "--size: unknown unit 'XB'"),
    (["--size", "1KiB", "--elements", "4"], "give --size or --elements, not both"),
    (["--reduce-bandwidth", "0GB/s"], "--reduce-bandwidth must be more than zero"),
    (["--topology", "flat", "--nodes", "2"], "topology flat has no nodes; give --gpus"),
    (["--topology", "dgx-h100", "--nodes", "2", "--gpus", "4"],
     "--gpus 4 disagrees with --nodes 2 × 8 GPUs per node = 16"),
    (["--topology", "nope"], "unknown topology 'nope'"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_bad_input_is_one_line(capsys, argv, message):
    status, out, err = run(["walk", *argv], capsys)
    assert status == 2 and out == ""
    assert err.startswith("ringsim walk: error: ") and message in err and err.count("\n") == 1


def test_a_huge_size_is_refused_by_the_memory_check_and_compare_prices_it(capsys):
    status, out, err = run(["walk", "--topology", "dgx-h100", "--size", "1TiB"], capsys)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "would need about" in err and "of memory" in err
    assert "`ringsim compare --time --gpus 4 --size 1TiB` (with the same time-model options)" in err
    status, out, _ = run(["compare", "--time", "--topology", "dgx-h100", "--gpus", "4",
                          "--size", "1TiB"], capsys)
    assert status == 0 and "Modelled time on dgx-h100" in out


def test_an_ascii_terminal_and_a_closed_reader(tmp_path):
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    argv = [sys.executable, "-m", "ringsim", "walk", "--topology", "dgx-h100", "--nodes", "2",
            "-n", "1600"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0 and proc.stderr == ""
    # 100 elements (400 B) per step over InfiniBand: 2.7 µs + 400 B / 50 GB/s + 400 B / 1.1 TB/s.
    assert "    time 2.71 us * bottleneck GPU1 receiving across nodes (InfiniBand NDR 400 Gb/s), " \
        "as busy: GPU9 * clock 2.71 us\n" in proc.stdout
    full = subprocess.run(argv, stdout=open("/dev/full", "w"), stderr=subprocess.PIPE,
                          text=True, timeout=120)
    assert full.returncode == 1
    assert full.stderr == "ringsim walk: error: cannot write to standard output: No space left on device\n"


def test_nvls_is_not_timed_where_the_switch_does_not_add(capsys):
    # compare --time and the sweep leave NVLS out on a switch that only forwards: walk says so too.
    from ringsim.algorithms.timing import unavailable
    why = unavailable("nvls", CostModel.of("flat", "float32"), 4)
    assert why
    status, out, _ = run(["walk", "-a", "nvls", "--time"], capsys)
    assert status == 0 and "Modelled time" not in out and "busbw" not in out
    assert f"Not timed on flat: NVLS (NVLink SHARP): {why}." in out
    assert "Every GPU holds the sum: yes" in out
    status, out, _ = run(["walk", "-a", "nvls", "--time", "--json"], capsys)
    steps, summary = records(out)
    assert status == 0 and all("seconds" not in r for r in steps)
    assert summary["seconds"] is None and summary["unavailable"] == why and "busbw" not in summary
    status, out, _ = run(["walk", "-a", "nvls", "--topology", "dgx-h100"], capsys)
    assert status == 0 and "Modelled time (textbook α-β-γ)" in out and "Not timed" not in out
