"""NCCL settings a paste shows that change what NCCL does but that the model does not follow:
diagnose names each in a note rather than pricing the run as if it were unset."""

from __future__ import annotations

import json

import pytest

from ringsim.cli import main

RUN = "tests/data/nccl_outputs/a3mega_h100_2node_all_reduce.txt"


def _notes(tmp_path, capsys, *lines: str) -> list[str]:
    paste = tmp_path / "run.txt"
    paste.write_text("\n".join(lines) + "\n" + open(RUN).read())
    assert main(["diagnose", "--no-plot", "--json", str(paste)]) == 0
    return json.loads(capsys.readouterr().out.splitlines()[-1])["notes"]


@pytest.mark.parametrize("line, name, value", [
    # init.cc, computeBuffSizes: NCCL_LL128_BUFFSIZE is LL128's buffer, so its step size
    ("host:1:1 [0] NCCL INFO NCCL_LL128_BUFFSIZE set by environment to 4194304.",
     "NCCL_LL128_BUFFSIZE", "4194304"),
    # tuning.cc, getNetOverhead: what posting a ring's step to the network costs
    ("mpirun -x NCCL_NET_OVERHEAD=2000 ./all_reduce_perf", "NCCL_NET_OVERHEAD", "2000"),
    # search.cc: whether a ring may leave a node on one NIC and enter the next on another
    ("NCCL INFO NCCL_CROSS_NIC set by environment to 1.", "NCCL_CROSS_NIC", "1"),
    # paths.cc: which GPU pairs use P2P
    ("NCCL INFO NCCL_P2P_LEVEL set by environment to PHB", "NCCL_P2P_LEVEL", "PHB"),
    # tuning.cc: CollNet's algorithms, where the network has the plugin
    ("export NCCL_COLLNET_ENABLE=1", "NCCL_COLLNET_ENABLE", "1"),
])
def test_a_setting_the_model_does_not_follow_is_named(tmp_path, capsys, line, name, value):
    notes = _notes(tmp_path, capsys, line)
    said = [n for n in notes if n.startswith(f"{name}={value} in the paste: not modelled")]
    assert len(said) == 1, notes


def test_settings_the_model_follows_or_reads_elsewhere_are_not_named(tmp_path, capsys):
    notes = _notes(tmp_path, capsys, "NCCL INFO NCCL_MAX_NCHANNELS set by environment to 8.",
                   "NCCL INFO NCCL_DEBUG set by environment to INFO.")
    assert not [n for n in notes if "not modelled" in n]


@pytest.mark.parametrize("header, said", [
    # nccl-tests -G 1: each timed loop is one CUDA graph, launched once
    ("agg iters: 1 validation: 1 graph: 1", "graph: 1 in the header (nccl-tests -G): not modelled"),
    # nccl-tests -m 4: four calls grouped in one launch, which NCCL aggregates
    ("agg iters: 4 validation: 1 graph: 0", "agg iters: 4 in the header (nccl-tests -m): not modelled"),
    # nccl-tests -c 0: no result is checked, so #wrong is not counted
    ("agg iters: 1 validation: 0 graph: 0", "validation: 0 in the header (nccl-tests -c 0)"),
    # nccl-tests -u 3: every buffer starts 3 elements past its allocation
    ("agg iters: 1 validation: 1 graph: 0 unalign: 3", "unalign: 3 in the header (nccl-tests -u): "
                                                       "not modelled"),
])
def test_the_headers_run_options_the_model_does_not_follow_are_named(tmp_path, capsys, header,
                                                                       said):
    paste = tmp_path / "run.txt"
    paste.write_text(open(RUN).read().replace("agg iters: 1 validation: 1 graph: 0", header))
    assert main(["diagnose", "--no-plot", "--json", str(paste)]) == 0
    notes = json.loads(capsys.readouterr().out.splitlines()[-1])["notes"]
    assert len([n for n in notes if n.startswith(said)]) == 1, notes


def test_a_plain_header_adds_no_note(tmp_path, capsys):
    assert main(["diagnose", "--no-plot", "--json", RUN]) == 0
    notes = json.loads(capsys.readouterr().out.splitlines()[-1])["notes"]
    assert not [n for n in notes if "in the header (nccl-tests" in n]
    # newer nccl-tests print "unalign: 0" on every run: aligned buffers, nothing to say
    paste = tmp_path / "run.txt"
    paste.write_text(open(RUN).read().replace("graph: 0", "graph: 0 unalign: 0"))
    assert main(["diagnose", "--no-plot", "--json", str(paste)]) == 0
    notes = json.loads(capsys.readouterr().out.splitlines()[-1])["notes"]
    assert not [n for n in notes if "in the header (nccl-tests" in n]
