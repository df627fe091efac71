"""Closed-form times by algorithm name: each registered module's `seconds` hook, priced on a model.

The hooks follow the α-β-γ model of ringsim.cost (Thakur, Rabenseifner & Gropp, IJHPCA
2005, §2) and give the same time as pricing the algorithm's plan, without building it.
"""

from __future__ import annotations

from ..core.checks import check_timed_elements
from ..core.errors import RingsimError
from ..cost.model import CostModel, Estimate, given_model
from . import ALGORITHMS, algorithm, check_options, option_names


def machine_options(name: str, gpus: int, model: CostModel | None) -> dict:
    """{'nodes': M} for an algorithm with nodes on a topology whose nodes G fills: the
    hierarchical ring's nodes are then the machine's (not its default √G), so --nodes and the
    topology mean one thing. {} otherwise."""
    if model is None or "nodes" not in option_names(name):
        return {}
    per_node, nodes = model.topology.gpus_per_node, model.topology.nodes(gpus)
    return {"nodes": nodes} if per_node and nodes > 1 and gpus % per_node == 0 else {}


# GPUs up to which NCCL's layouts are priced: a layout of K rings is priced port by port over
# K·G ring positions, which keeps compare instant up to here.
LAYOUT_LIMIT = 65_536


def nccl_layout(name: str, gpus: int, model: CostModel | None,
                given: dict | None = None) -> dict | None:
    """The options (as users write them) that lay algorithm `name` out as NCCL does on the
    model's machine, where that differs from its default layout and none of the `given`
    options lays it out already: {'ring_order': 'rails:8'} for the ring on nodes of 8. None
    elsewhere, without a model, and above LAYOUT_LIMIT GPUs."""
    if model is None or gpus > LAYOUT_LIMIT:
        return None
    own = {k: v for k, v in (given or {}).items() if k in option_names(name) and v is not None}
    return algorithm(name).nccl_layout(gpus, model.topology, **own)


def nccl_layouts(gpus: int, model: CostModel | None,
                 given: dict | None = None) -> list[tuple[str, dict]]:
    """(algorithm, options) for each registered algorithm that NCCL lays out otherwise on the
    model's machine (nccl_layout), in registry order."""
    found = [(name, nccl_layout(name, gpus, model, given)) for name in ALGORITHMS]
    return [(name, options) for name, options in found if options]


def timed_algorithms(model: CostModel | None = None, gpus: int | None = None) -> list[str]:
    """Names of the registered algorithms: every one has a closed-form time. Given a model and
    G, only those its hardware can run (NVLS needs a switch that adds: `AlgorithmSpec.unavailable`)."""
    if model is None or gpus is None:
        return list(ALGORITHMS)
    return [name for name, spec in ALGORITHMS.items()
            if not spec.unavailable(model.topology, gpus, model.dtype)]


def unavailable(name: str, model: CostModel, gpus: int) -> str:
    """Why algorithm `name` cannot run on the model's hardware at G GPUs ('' when it can)."""
    return algorithm(name).unavailable(model.topology, gpus, model.dtype)


def check_timed(name: str, model: CostModel, gpus: int) -> None:
    """Refuse, in one line, to time algorithm `name` where the model's hardware cannot run it."""
    why = unavailable(name, model, gpus)
    if why:
        topology = model.topology
        inside = topology.levels.get("inside")
        # Where the switch inside a node adds, it is G that spans nodes: say how many fit.
        fix = (f"on {topology.name} it is timed within one node (at most "
               f"{topology.gpus_per_node} GPUs)"
               if getattr(inside, "in_network_reduction", False) and topology.gpus_per_node
               else "a topology whose switch adds (dgx-h100, dgx-h200) times it")
        raise RingsimError(f"{algorithm(name).title} is not timed on {topology.name} at "
                           f"{gpus:,} GPUs: {why}; {fix}")


def estimate(name: str, gpus: int, elements: int, model: CostModel | None = None,
             **options) -> Estimate:
    """Algorithm `name`'s closed-form time for G GPUs of N elements (no plan is built); options
    as users give them (master= is 1-based), checked as make_plan checks them."""
    model = given_model(model)
    spec = algorithm(name)
    gpus = model.topology.check_gpus(gpus)
    elements = check_timed_elements(elements)
    return spec.seconds(gpus, elements, model, **check_options(name, gpus, options))
