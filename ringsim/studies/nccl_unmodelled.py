"""NCCL settings a paste may show that change what NCCL does, but that the model does not
follow: each is named in a note, so that a run made with one is not read as NCCL's default.
What each changes, in NCCL's source (src/): the words after each name.
"""

from __future__ import annotations

import re

UNMODELLED = {
    "NCCL_LL_BUFFSIZE": "it sets LL's buffer (init.cc, computeBuffSizes)",
    "NCCL_LL128_BUFFSIZE": "it sets LL128's buffer (init.cc, computeBuffSizes)",
    "NCCL_THREAD_THRESHOLDS": "it sets the bytes per thread below which a call drops a channel "
                              "(graph/tuning.cc)",
    "NCCL_CROSS_NIC": "it lets a ring leave a node on one NIC and enter the next on another "
                      "(graph/search.cc)",
    "NCCL_P2P_LEVEL": "it sets which GPU pairs in a node use P2P (graph/paths.cc)",
    "NCCL_P2P_DISABLE": "it turns off P2P between a node's GPUs (graph/paths.cc)",
    "NCCL_COLLNET_ENABLE": "it turns on CollNet's algorithms where the network has the plugin "
                           "(graph/tuning.cc); the topology file's network says whether the "
                           "model has them",
    "NCCL_PAT_ENABLE": "it sets whether PAT runs all-gather and reduce-scatter "
                       "(graph/tuning.cc, ncclPatEnable)",
    "NCCL_NET_OVERHEAD": "it sets what posting a ring's step to the network costs "
                         "(graph/tuning.cc, getNetOverhead)",
    "NCCL_NVLS_CHUNKSIZE": "it sets NVLS's chunk size (transport/nvls.cc)",
    "NCCL_TUNER_PLUGIN": "a tuner plugin chooses in NCCL's place",
    "NCCL_CTA_POLICY": "it changes how many blocks NCCL's calls run on (init.cc)",
    "NCCL_TOPO_FILE": "NCCL reads the machine from that file rather than from the system",
    "NCCL_GRAPH_FILE": "NCCL reads its rings and trees from that file rather than searching",
}
_SETTING = re.compile(r"\b(" + "|".join(UNMODELLED) + r")(?:=| set by environment to )[\"']?"
                      r"([^\s\"';,]{1,40})")


def read(line: str, found: dict[str, str]) -> None:
    """Add the unmodelled settings `line` makes to `found`: by name, the first value seen (a
    trailing full stop, as NCCL's echo ends, left off)."""
    for name, value in _SETTING.findall(line):
        found.setdefault(name, value.rstrip("."))


def notes(found: dict[str, str]) -> list[str]:
    """One note per unmodelled setting the paste shows, in the order it shows them."""
    return [f"{name}={value} in the paste: not modelled, the model prices NCCL without it: "
            f"{UNMODELLED[name]}" for name, value in found.items()]


# nccl-tests' header line: `... agg iters: 1 validation: 1 graph: 0` (newer ones add `unalign: 0`)
_OPTIONS = re.compile(r"\b(agg iters|validation|graph|unalign):\s*(\d{1,9})\b")


def read_header(line: str, options: dict[str, int]) -> None:
    """The run options nccl-tests' header line states: agg iters (-m), validation (-c),
    graph (-G) and unalign (-u)."""
    for name, value in _OPTIONS.findall(line):
        options.setdefault(name, int(value))


def header_notes(options: dict[str, int]) -> list[str]:
    """One note per run option that changes what the times measure and that the model does not
    follow: graph launches, aggregated calls, misaligned buffers; and one where results went
    unchecked."""
    found = []
    if options.get("graph", 0) > 0:
        found.append(f"graph: {options['graph']} in the header (nccl-tests -G): not modelled: "
                     "each timed loop ran as a CUDA graph, launched once, so the times leave out "
                     "most of the host's launch cost, which the measured latency then lacks; the "
                     "model prices NCCL's own latency as for any launch")
    if options.get("agg iters", 1) > 1:
        found.append(f"agg iters: {options['agg iters']} in the header (nccl-tests -m): not "
                     f"modelled: {options['agg iters']} calls went in one group, which NCCL "
                     "launches together and, but for rings, prices with one latency for a batch "
                     "of them (enqueue.cc, ncclTopoGetAlgoTime's numPipeOps), so a call may take "
                     "less than the model's time for one call alone")
    if options.get("unalign", 0) > 0:
        found.append(f"unalign: {options['unalign']} in the header (nccl-tests -u): not "
                     f"modelled: every buffer started {options['unalign']} elements past its "
                     "allocation, which can leave it off the 16-byte alignment of NCCL's widest "
                     "loads and stores, so calls may take longer than the model's, which prices "
                     "aligned buffers")
    if options.get("validation") == 0:
        found.append("validation: 0 in the header (nccl-tests -c 0): no result was checked, so "
                     "the times say nothing of whether the sums were right")
    return found
