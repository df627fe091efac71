"""NCCL_ALGO and NCCL_PROTO in the per-function form NCCL reads from 2.24.3
(src/graph/tuning.cc, parseList: `ring;allreduce:tree`, `^LL128;allreduce:LL128`), as
`predict --algo/--proto`, the API and a pasted run take them.

The expected choices and latencies below are worked by hand from NCCL 2.30.7's
src/graph/tuning.cc (ncclTopoTuneModel's latency sums, ncclTopoGetAlgoTime) with the tuning
table `ringsim predict --nodes 2 --tuning` prints for dgx-h100 (16 GPUs in 2 nodes, 8 per node,
an Intel host, net plugin latency 0)."""

from __future__ import annotations

import json

import pytest

from ringsim.cli import main
from ringsim.core.errors import RingsimError
from ringsim.cost.nccl import nccl_choices, tuning_table
from ringsim.cost.topology import load

H100 = load("dgx-h100")
GPUS = 16


def _one(size: int, collective: str = "all-reduce", topology=H100, gpus: int = GPUS, **lists):
    """NCCL's modelled choice for one call."""
    return nccl_choices(topology, gpus, [size], collective, **lists)[0]


def test_a_function_prefix_sets_that_functions_algorithms_only():
    # NCCL_ALGO="ring;allreduce:tree" (the example above parseList in tuning.cc): every
    # function gets Ring, then AllReduce gets Tree alone.
    tree = _one(8, algo="ring;allreduce:tree")
    # Tree/LL AllReduce latency, tuning.cc: baseLat 6.8 + 2 * ((nRanks/nNodes - 1) * 0.6
    # (NVLink Tree LL) + log2i(2) * 5.0 (NET Tree LL)) = 6.8 + 2 * (4.2 + 5.0) = 25.2 us.
    assert (tree.algorithm, tree.protocol) == ("Tree", "LL")
    assert tree.latency == pytest.approx(25.2e-6, abs=1e-9)
    # the same call held to Tree by the plain form, and a large one: Tree, not NVLSTree
    assert tree == _one(8, algo="Tree")
    assert _one(1 << 30, algo="ring;allreduce:tree").algorithm == "Tree"
    # an all-gather under the same setting runs the ring: Ring/LL latency, tuning.cc:
    # baseLat 6.6 + (nsteps 15 - nInterSteps 1) * max(0.6, getNetOverhead 1.0) + 1 * 2.7 = 23.3 us
    gather = _one(8, "all-gather", algo="ring;allreduce:tree")
    assert (gather.algorithm, gather.protocol) == ("Ring", "LL")
    assert gather.latency == pytest.approx(23.3e-6, abs=1e-9)


def test_a_prefix_alone_leaves_the_other_functions_every_algorithm():
    # NCCL_ALGO="allreduce:ring": AllReduce gets Ring; no other function's list is touched.
    ring = _one(8, algo="allreduce:ring")
    # Ring/LL AllReduce latency, tuning.cc: 6.6 + (30 - 2) * 1.0 + 2 * 2.7 = 40.0 us
    assert (ring.algorithm, ring.protocol, ring.latency) == ("Ring", "LL", pytest.approx(40.0e-6))
    for collective in ("all-gather", "reduce-scatter", "broadcast"):
        assert _one(1 << 20, collective, algo="allreduce:ring") == _one(1 << 20, collective)


def test_a_protocol_prefix_and_exclusion_as_tuning_cc_documents_them():
    # NCCL_PROTO="^LL128;allreduce:LL128": all but LL128, then LL128 alone for AllReduce.
    reduce = _one(8, proto="^LL128;allreduce:LL128")
    # LL128 at 8 B: Tree 14.0 + 2 * (7 * 1.25 + 1 * 8.5) = 48.5 us beats Ring's
    # 14.0 + 28 * max(1.9, 1.0) + 2 * 4.0 = 75.2 us
    assert (reduce.algorithm, reduce.protocol) == ("Tree", "LL128")
    assert reduce.latency == pytest.approx(48.5e-6, abs=1e-9)
    gather = _one(8, "all-gather", proto="^LL128;allreduce:LL128")
    assert (gather.algorithm, gather.protocol) == ("Ring", "LL")
    # the later entry for AllReduce replaces what the first gave it
    assert _one(8, proto="Simple;allreduce:LL").protocol == "LL"
    assert _one(8, "all-gather", proto="Simple;allreduce:LL").protocol == "Simple"


def test_a_function_the_protocol_list_never_names_keeps_ll128s_default():
    # tuning.cc starts every function's LL128 at 2 (its default: on only where the paths
    # allow, e.g. off over PCIe) and parseList sets a function's entries only where its prefix
    # matches: NCCL_PROTO="allgather:^LL" leaves AllReduce's LL128 at its default, whereas
    # "^LL" sets it to 1 (on, whatever the default).
    pcie = load("pcie-gen4")
    gpus = 8
    untouched = tuning_table(pcie, gpus, proto="allgather:^LL")
    plain = tuning_table(pcie, gpus)
    for proto in ("LL", "LL128", "Simple"):
        assert untouched[("AllReduce", "Ring", proto)] == plain[("AllReduce", "Ring", proto)]
    assert plain[("AllReduce", "Ring", "LL128")][1] == 0.0  # LL128's default is off there
    assert tuning_table(pcie, gpus, proto="^LL")[("AllReduce", "Ring", "LL128")][1] > 0
    # and the function it names: LL off, LL128 on as named
    assert untouched[("AllGather", "Ring", "LL")][1] == 0.0
    assert untouched[("AllGather", "Ring", "LL128")][1] > 0


@pytest.mark.parametrize("given, words", [
    ("tree;ring", "every entry after the first needs a function"),
    ("alltoall:ring", "unknown function 'alltoall'"),
    ("allreduce:ring:tree", "one ':'"),
    ("allreduce:bogus", "unknown algorithm 'bogus'"),
])
def test_a_list_nccl_refuses_is_refused(given, words):
    with pytest.raises(RingsimError, match=words):
        _one(8, algo=given)


def test_before_2_24_3_the_per_function_form_is_refused():
    # NCCL up to 2.23.4 parses NCCL_ALGO as one list for every function (parseList(str,
    # elems, nelems, list)) and reads 'allreduce:tree' as a name it does not know.
    with pytest.raises(RingsimError, match="2.24.3"):
        nccl_choices(H100, GPUS, [8], algo="allreduce:tree", nccl="2.23.4")
    assert nccl_choices(H100, GPUS, [8], algo="allreduce:tree", nccl="2.24.3")[0].algorithm == "Tree"


def test_predict_takes_the_per_function_form(capsys):
    assert main(["predict", "--nodes", "2", "--sizes", "8B", "--json",
                 "--algo", "ring;allreduce:tree", "--proto", "allreduce:LL"]) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    assert (row["algorithm"], row["protocol"]) == ("Tree", "LL")
    assert main(["predict", "--nodes", "2", "--sizes", "8B", "--json", "--collective",
                 "broadcast", "--algo", "tree;broadcast:ring"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["algorithm"] == "Ring"
    # broadcast left no ring by its own entry is refused, as NCCL fails the call
    assert main(["predict", "--nodes", "2", "--sizes", "8B", "--collective", "broadcast",
                 "--algo", "ring;broadcast:tree"]) == 2
    assert "tunes only Ring for broadcast" in capsys.readouterr().err


def test_diagnose_holds_the_model_to_a_pasted_per_function_setting(tmp_path, capsys):
    paste = tmp_path / "run.txt"
    text = open("tests/data/nccl_outputs/a3mega_h100_2node_all_reduce.txt").read()
    paste.write_text("NCCL INFO NCCL_ALGO set by environment to allreduce:ring\n" + text)
    assert main(["diagnose", "--no-plot", "--json", str(paste)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    sizes = [r for r in rows if r["type"] == "size"]
    assert len(sizes) == 31 and {r["algorithm"] for r in sizes} == {"Ring"}
