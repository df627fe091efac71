"""The registry of all-reduce algorithms: each module turns (G, options) into a Plan."""

from __future__ import annotations

from types import ModuleType

from ..checks import check_count, check_elements, check_gpus
from ..errors import RingsimError
from ..formula import ClosedForm
from ..plan import Plan
from . import master, naive, ring

ALGORITHMS: dict[str, ModuleType] = {m.NAME: m for m in (ring, master, naive)}

# A plan keeps four int64 columns per transfer (32 bytes), and building one briefly needs
# a few times that: 5,000,000 transfers stay well under 1 GB (a ring of 1,581 GPUs, the
# naive flood of 2,236). Counts for any G come from closed_form, which builds no plan.
MAX_PLAN_TRANSFERS = 5_000_000


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
    options = _options(name, gpus, master)
    count = module.transfers(gpus, **options)
    if count > MAX_PLAN_TRANSFERS:
        raise RingsimError(
            f"a {name} plan for {gpus:,} GPUs holds {count:,} transfers, more than the "
            f"{MAX_PLAN_TRANSFERS:,} a plan may hold (MAX_PLAN_TRANSFERS, about "
            f"{MAX_PLAN_TRANSFERS * 32 // 10**6} MB); for the counts at any G use "
            f"ringsim.closed_form or `ringsim compare`")
    return module.plan(gpus, **options)


def transfers(name: str, gpus: int, *, master: int | None = None) -> int:
    """The number of transfers algorithm `name`'s plan for G GPUs holds (no plan is built)."""
    module = algorithm(name)
    gpus = check_gpus(gpus)
    return module.transfers(gpus, **_options(name, gpus, master))


def closed_form(name: str, gpus: int, elements: int, *, master: int | None = None) -> ClosedForm:
    """Algorithm `name`'s exact figures at G GPUs and N elements each (no plan is built)."""
    module = algorithm(name)
    gpus, elements = check_gpus(gpus), check_elements(elements)
    if master is not None and name != "master":
        raise RingsimError("--master only applies to the master algorithm")
    return module.closed_form(gpus, elements, **_options(name, gpus, master))
