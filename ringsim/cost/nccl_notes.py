"""NCCL's model in words, for the reports beside its choice: why release `nccl` runs
another algorithm than NCCL_ALGO asks (algo_note) or none at all (the reasons), what a NIC
far from its GPU does (path_note), a part-filled last node (last_node_note) and links slower
than every speed NCCL's search lists (fallback_note). Each returns one line, or None where
there is nothing to say.
"""

from __future__ import annotations

from ..core.arguments import argument
from ..core.naming import plural
from .nccl_call import (RING, candidates, checked_topology, listed_names, nccl_function,
                        sets_protocols)
from .nccl_channels import tune
from .nccl_graph import constants, search_speeds
from .nccl_runtime import fallback_link_graph
from .nccl_tuner import (NVLS_FAMILY, PROTOCOLS, carried, check_dtype, enabled_algorithms, looped,
                         names, nvls_reduces)


def algo_note(topology, gpus: int, collective: str = "all-reduce", algo: str | None = None,
              proto: str | None = None, nccl: str | None = None,
              dtype: str = "float") -> str | None:
    """One comment line where release `nccl` does not run what `algo` (NCCL_ALGO) asks for a
    collective but an algorithm it puts back itself (None where it runs what was asked)."""
    if algo is None:
        return None
    func = nccl_function(collective, algo, nccl)
    algos = listed_names(algo, "algorithms", argument("algo"), func, nccl)
    protos = listed_names(proto, "protocols", argument("proto"), func, nccl)
    tuned = tune(checked_topology(topology, gpus), gpus, nccl)
    sys = tuned.sys
    release = f"NCCL {nccl or carried()[0]}"
    asked = f"--algo {algo.strip()[:40]}"
    pairs, fallback = candidates(tuned, func, algos, protos, sets_protocols(proto, func),
                                 check_dtype(dtype))
    if fallback and pairs:
        kept = sorted({p for _, p in pairs}, key=PROTOCOLS.index)
        listed = kept[0] if len(kept) == 1 else f"{', '.join(kept[:-1])} and {kept[-1]}"
        return (f"# {asked} leaves {release} no algorithm for {collective}: it falls back to "
                f"{RING} with {listed}, the ring's bandwidth it kept aside (comm->ringbdw: "
                "src/graph/tuning.cc, \"at least set ring algo available\", and enqueue.cc), "
                "and so does the model; NCCL 2.24.3 and later refuse the call")
    on = enabled_algorithms(sys, algos)
    if on != algos and any(a not in algos for a, _ in pairs):
        back = ("with none of Ring, Tree, NVLS and NVLSTree left and no CollNet, its "
                "src/graph/tuning.cc turns Ring and Tree back on (\"If user has hard set "
                "NCCL_ALGO=COLLNET, ignore it\"), and so does the model")
        running = sorted({a for a, _ in pairs if a in algos}, key=names("algorithms").index)
        if running:
            return (f"# {asked}: {release} runs {' and '.join(running)} here, and beside it "
                    f"Ring and Tree: {back}; it picks the fastest of them")
        why = ("; ".join(off_reasons(sys, algos, func, protos, dtype))
               or "none of them has a cell here")
        return f"# {asked}: {release} runs none of what it names here ({why}); {back}"
    if any(a not in on for a, _ in pairs):
        return (f"# {release} never takes {RING} from {collective} whatever {asked} says "
                "(src/graph/tuning.cc: \"Never disable ring for non-allreduce operations\"), "
                "and so does the model")
    return None


def _nvls_reasons(sys, algos: set, func: str | None, protos: set, dtype: str,
                  redop: str = "sum") -> list[str]:
    """Why NVLS and NVLSTree of `algos` do not run here (one clause each; none where they do)."""
    asked = [a for a in NVLS_FAMILY if a in algos]
    if not asked:
        return []
    both = " and ".join(asked)
    verb = "need" if len(asked) > 1 else "needs"
    if sys.arch not in ("hopper", "blackwell"):
        return [f"{both} {verb} Hopper or later GPUs (arch = \"hopper\" or \"blackwell\")"]
    if not sys.nvswitch:
        return [f"{both} {verb} an NVSwitch: an [inside] level of kind = \"nvlink\" joining "
                "more than two GPUs"]
    if not sys.nvls:
        return [f"{both} {verb} an NVSwitch that reduces, in_network_reduction = true in "
                "[inside]"]
    least = sys.tables["rules"]["nvls_min_gpus"]
    if sys.min_local < least:
        # every node must have NVLS: the emptiest sets it for all (init.cc takes the minimum)
        last = (f"; the last node holds {plural(sys.min_local, 'GPU')}"
                if sys.last_node is not None else "")
        return [f"{both} {verb} at least {least} GPUs in every node in this release "
                f"(src/transport/nvls.cc){last}"]
    if func is not None and not nvls_reduces(sys, func, dtype, redop):
        if redop == "sum":
            return [f"{both} cannot add {dtype}: the switch adds only "
                    f"{', '.join(sys.tables['types']['nvls_sum'])} (src/include/device.h, "
                    "ncclNvlsSupported)"]
        return [f"{both} cannot take the {redop} of {dtype}: the switch takes the min and max "
                f"of {', '.join(sys.tables['types']['nvls_minmax'])} only, and no other "
                "reduction but the sum (src/include/device.h, ncclNvlsSupported)"]
    if "Simple" not in protos:
        return [f"{both} run{'s' * (len(asked) == 1)} the Simple protocol only"]
    reasons = []
    if "NVLS" in asked and sys.nodes > 1 and not sys.collnet:
        reasons.append("NVLS runs across nodes only with CollNet, on a network that reduces, "
                       "in_network_reduction = true in [across]")
    if "NVLSTree" in asked and sys.nodes == 1:
        reasons.append("NVLSTree needs more than one node")
    return reasons


def off_reasons(sys, algos: set, func: str | None = None, protos: set | None = None,
                dtype: str = "float", redop: str = "sum") -> list[str]:
    """Why NCCL gives each of `algos` no bandwidth on this machine, where a topology file says
    it (one clause each; nothing for an algorithm that runs, or one off for another reason)."""
    reasons = []
    absent = [a for a in names("algorithms") if a in algos and a in sys.tables["rules"]["absent"]]
    if absent:
        reasons.append(f"this release has no {' or '.join(absent)}")
    collnet = sorted(a for a in algos if a.startswith("CollNet"))
    if collnet and not sys.collnet:
        reasons.append(f"{' and '.join(collnet)} need{'s' * (len(collnet) == 1)} at least two "
                       "nodes and a network that reduces, InfiniBand SHARP, which a topology "
                       "file states with in_network_reduction = true in [across]")
    reasons += _nvls_reasons(sys, algos, func, set(PROTOCOLS) if protos is None else protos,
                             dtype, redop)
    if "PAT" in algos and func in (None, "AllGather", "ReduceScatter") and sys.ranks != sys.nodes:
        reasons.append("PAT runs only with one GPU per node")
    if func is not None:
        # the release's tuning.cc has no cell for the function at all (Tree's all-gather)
        said = " ".join(reasons)
        idle = [a for a in names("algorithms") if a in algos and f"{a} " not in said
                and a not in sys.tables["rules"]["absent"] and not any(
                    looped(sys, func, a, p) for p in PROTOCOLS)]
        reasons += [f"{a} runs no {func} in this release's src/graph/tuning.cc" for a in idle]
    return reasons


def path_note(topology, gpus: int, nccl: str | None = None) -> str | None:
    """One line (no leading '#') on what a far NIC does to NCCL's model across nodes: with
    nic_path phb or sys LL128 is off, and with sys every channel of a node shares the link
    between its CPU sockets, whose rate, and its source in NCCL, it names; None on one node
    or with a NIC near its GPU."""
    topo = checked_topology(topology, gpus)
    tuned = tune(topo, gpus, nccl)
    sys = tuned.sys
    if sys.nodes < 2 or sys.type_inter not in ("phb", "sys"):
        return None
    release = f"NCCL {nccl or carried()[0]}"
    given = topo.level("across").nic_path
    named = f"nic_path {given}" + (f" (which {release} names phb)" if given != sys.type_inter
                                    else "")
    ll128 = f"{release} turns LL128 off across nodes (src/graph/tuning.cc)"
    if sys.type_inter == "phb":
        return (f"{named}: each GPU reaches its NIC through its CPU's root complex, so {ll128}; "
                "the NIC keeps its rate")
    source = sys.tables["link_rates"]["cpu_link_names"][topo.cpu]
    newest = constants()["link_rates"]
    later = ""
    if newest["cpu_interconnect"][topo.cpu] != sys.cpu_link:
        later = (f"; later releases rate it {newest['cpu_interconnect'][topo.cpu]:g} GB/s "
                 f"({newest['cpu_link_names'][topo.cpu]})")
    plain = ("; a plain \"intel\" names no generation and is rated as a Skylake: give cpu = "
             "\"intel-sapphire-rapids\" or another, docs/cost.md" if topo.cpu == "intel" else "")
    return (f"{named}: each GPU's NIC is on the other CPU socket, so {ll128}, and every channel "
            f"of a node crosses the link between the sockets, which they share: "
            f"{sys.cpu_link:g} GB/s each way, {release}'s {source} for cpu = \"{topo.cpu}\" "
            f"(src/graph/topo.cc, ncclTopoGetInterCpuBw){later}{plain}")


def last_node_note(topology, gpus: int) -> str | None:
    """One line (no leading '#') where G leaves the last node with fewer GPUs than the others:
    NCCL aligns every rank on the fewest channels and slowest speeds any node found; None
    where every node holds as many."""
    topo = checked_topology(topology, gpus)
    nodes = topo.nodes(gpus)
    last, full = topo.node_size(nodes - 1, gpus), topo.node_size(0, gpus)
    if nodes < 2 or last == full:
        return None
    return (f"the last node holds {plural(last, 'GPU')} of the {full} a node holds: every node "
            "runs on the fewest channels and slowest speeds any node's search found, as "
            "NCCL aligns its ranks (src/init.cc)")


def fallback_note(topology, gpus: int, nccl: str | None = None) -> str | None:
    """One line (no leading '#') where the links are slower than every speed NCCL's search
    lists, so that NCCL falls back to one channel it rates at 0.1 GB/s; None elsewhere."""
    tuned = tune(checked_topology(topology, gpus), gpus, nccl)
    sys = tuned.sys
    if not tuned.graphs["Ring"].fallback:
        return None
    slowest = min(search_speeds(sys))
    link = fallback_link_graph(tuned, "Ring")
    rate = min(x for x in (link.bw_intra if sys.ranks > sys.nodes else None,
                           link.bw_inter if sys.nodes > 1 else None) if x is not None)
    release = f"NCCL {nccl or carried()[0]}"
    return (f"these links are slower than every speed {release}'s search lists (its slowest "
            f"here is {slowest:g} GB/s; the slowest link gives {rate:g} GB/s as NCCL rates "
            "it), so NCCL falls back to one channel in rank order, which it rates 0.1 GB/s "
            "(src/graph/search.cc); it chooses on that figure, and the times are that channel "
            "at the link's rate (docs/cost.md, deviation 15)")
