"""diagnose names as a possible cause only a protocol NCCL's model picks at the sizes it blames:
a paste that starts at 1 MiB (nccl-tests -b 1M) has latency-bound sizes that NCCL runs with
Simple, not LL, so "LL disabled?" would send the reader after a setting that changes nothing."""

from __future__ import annotations

from pathlib import Path

from diagnose_published import diagnosis, runs

from ringsim.cli import main

MIB = 1 << 20
OUTPUTS = Path(__file__).parent / "data" / "nccl_outputs"


def _latency_verdict(tmp_path, smallest: int) -> tuple[list[dict], str]:
    """The latency-bound size records and their verdict for a published healthy B200 run,
    pasted from `smallest` bytes up."""
    system, algo, proto, nccl, points = next(
        run for run in runs() if run[0]["id"] == "lambda-b200-2x8-ib" and not run[1] and not run[2])
    assert system["health"] == "healthy"
    found = diagnosis(system, algo, proto, nccl, [p for p in points if p["bytes"] >= smallest],
                      tmp_path)
    latency = [r for r in found["sizes"] if r["regime"] == "latency"]
    (said,) = [v for v in found["summary"]["verdicts"] if v.startswith("Latency-bound")]
    return latency, said


def test_a_paste_from_1mib_names_the_protocol_nccl_runs_there(tmp_path):
    latency, said = _latency_verdict(tmp_path, MIB)
    assert [r["bytes"] for r in latency] == [MIB, 2 * MIB, 4 * MIB, 8 * MIB]
    assert {r["protocol"] for r in latency} == {"Simple"}
    assert "Every call costs more than NCCL's model" in said
    assert "LL disabled" not in said
    assert "the protocol NCCL's model picks at these sizes being turned off (Simple, by NCCL_PROTO)" in said


def test_a_paste_from_8_bytes_names_every_protocol_of_its_latency_bound_sizes(tmp_path):
    latency, said = _latency_verdict(tmp_path, 0)
    assert [r["protocol"] for r in latency][0] == "LL" and latency[-1]["protocol"] == "Simple"
    assert "being turned off (LL, LL128 or Simple, by NCCL_PROTO)" in said


def test_a_run_held_to_one_protocol_is_not_told_to_look_at_the_protocol(capsys):
    # The paste's run set NCCL_PROTO=simple, and the model is held to it: a shortfall against
    # that model cannot come from the protocol, which both ran.
    assert main(["diagnose", str(OUTPUTS / "eks_efa_t4_2node_mpirun.txt"),
                 "--topology", "ethernet-100g"]) == 0
    out = capsys.readouterr().out
    assert "held to NCCL_PROTO=simple" in out
    (said,) = [line for line in out.splitlines() if "Latency-bound sizes" in line]
    assert said.endswith("Every call costs more than NCCL's model: kernel launch and proxy-thread "
                         "overhead, CPU binding far from the GPU, or network latency on the hops "
                         "that cross nodes.")
