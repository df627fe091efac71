"""The registry of all-reduce algorithms: each module turns (G, options) into a Plan."""

from __future__ import annotations

from types import ModuleType

from ..checks import check_count, check_gpus
from ..errors import RingsimError
from ..formula import ClosedForm
from ..plan import Plan
from . import master, naive, ring

ALGORITHMS: dict[str, ModuleType] = {m.NAME: m for m in (ring, master, naive)}


def algorithm(name: str) -> ModuleType:
    """The module of a named algorithm, or a RingsimError listing the known ones."""
    try:
        return ALGORITHMS[name]
    except (KeyError, TypeError):
        known = ", ".join(ALGORITHMS)
        raise RingsimError(f"unknown algorithm {name!r}; choose one of: {known}") from None


def _options(name: str, gpus: int, master_gpu: int | None) -> dict:
    """Keyword options for the algorithm's plan(); master_gpu is 1-based as users write it."""
    if name != "master":
        return {}
    if master_gpu is None:
        return {"master": 0}
    number = check_count(master_gpu, "the master GPU", minimum=1, maximum=gpus)
    return {"master": number - 1}


def make_plan(name: str = "ring", gpus: int = 4, *, master: int | None = None) -> Plan:
    """The plan of algorithm `name` for G GPUs (`master` is the 1-based master GPU)."""
    module = algorithm(name)
    gpus = check_gpus(gpus)
    if master is not None and name != "master":
        raise RingsimError("--master only applies to the master algorithm")
    return module.plan(gpus, **_options(name, gpus, master))


def closed_form(name: str, gpus: int, elements: int) -> ClosedForm:
    """The seed's formulas for algorithm `name`, evaluated at G and N."""
    return algorithm(name).closed_form(gpus, elements)
