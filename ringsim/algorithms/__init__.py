"""The registry of all-reduce algorithms: each module turns (G, options) into a Plan.

An algorithm module holds NAME, TITLE, SUMMARY, an `Options` frozen dataclass (every
option has a default), `plan(gpus, **options)`, `closed_form(gpus, elements, **options)`
(exact, no plan built), `transfers(gpus, **options)` and, where options need checking,
`check_options(gpus, **options) -> dict`. `master` keeps its 1-based API option.
"""

from __future__ import annotations

import dataclasses
from types import ModuleType

from ..core.checks import check_count, check_elements, check_gpus
from ..core.errors import RingsimError
from ..core.formula import ClosedForm
from ..core.plan import Plan
from . import (bidirectional_ring, double_tree, halving_doubling, hierarchical, master, naive,
               recursive_doubling, ring, tree)

ALGORITHMS: dict[str, ModuleType] = {m.NAME: m for m in (
    ring, master, naive, tree, double_tree, recursive_doubling, halving_doubling,
    bidirectional_ring, hierarchical)}

# A plan keeps its columns per transfer (about 40 bytes), and building one briefly needs a
# few times that: 5,000,000 transfers stay well under 1 GB. Counts for any G come from
# closed_form, which builds no plan.
MAX_PLAN_TRANSFERS = 5_000_000


def algorithm(name: str) -> ModuleType:
    """The module of a named algorithm, or a RingsimError listing the known ones."""
    try:
        return ALGORITHMS[name]
    except (KeyError, TypeError):
        known = ", ".join(ALGORITHMS)
        raise RingsimError(f"unknown algorithm {name!r}; choose one of: {known}") from None


def option_names(name: str) -> tuple[str, ...]:
    """The keyword options algorithm `name` takes (master: 'master')."""
    module = algorithm(name)
    if name == "master":
        return ("master",)
    options = getattr(module, "Options", None)
    return tuple(f.name for f in dataclasses.fields(options)) if options else ()


def _flag(option: str) -> str:
    return "--" + option.replace("_", "-")


def _options(name: str, gpus: int, master_gpu: int | None, given: dict) -> dict:
    """Checked keyword options for the algorithm's plan(); master_gpu is 1-based as users write it."""
    given = {k: v for k, v in given.items() if v is not None}
    if master_gpu is not None and name != "master":
        raise RingsimError("--master only applies to the master algorithm")
    allowed = option_names(name)
    for option in given:
        if option not in allowed:
            takes = ", ".join(_flag(o) for o in allowed) if allowed else "no options"
            users = [n for n in ALGORITHMS if option in option_names(n)]
            where = f" ({_flag(option)} is for {', '.join(users)})" if users else ""
            raise RingsimError(f"{name} takes {takes}, not {_flag(option)}{where}")
    if name == "master":
        if master_gpu is None:
            return {"master": 0}
        number = check_count(master_gpu, "the master GPU", minimum=1, maximum=gpus)
        return {"master": number - 1}
    module = algorithm(name)
    check = getattr(module, "check_options", None)
    return check(gpus, **given) if check else given


def make_plan(name: str = "ring", gpus: int = 4, *, master: int | None = None, **options) -> Plan:
    """The plan of algorithm `name` for G GPUs (`master` is the 1-based master GPU; other
    options as the algorithm takes them: chunks=, channels=, ring_order=, nodes=)."""
    module = algorithm(name)
    gpus = check_gpus(gpus)
    checked = _options(name, gpus, master, options)
    count = module.transfers(gpus, **checked)
    if count > MAX_PLAN_TRANSFERS:
        raise RingsimError(
            f"a {name} plan for {gpus:,} GPUs holds {count:,} transfers, more than the "
            f"{MAX_PLAN_TRANSFERS:,} a plan may hold (MAX_PLAN_TRANSFERS, about "
            f"{MAX_PLAN_TRANSFERS * 40 // 10**6} MB); for the counts at any G use "
            f"ringsim.closed_form or `ringsim compare`")
    return module.plan(gpus, **checked)


def transfers(name: str, gpus: int, *, master: int | None = None, **options) -> int:
    """The number of transfers algorithm `name`'s plan for G GPUs holds (no plan is built)."""
    gpus = check_gpus(gpus)
    return algorithm(name).transfers(gpus, **_options(name, gpus, master, options))


def closed_form(name: str, gpus: int, elements: int, *, master: int | None = None, **options) -> ClosedForm:
    """Algorithm `name`'s exact figures at G GPUs and N elements each (no plan is built)."""
    module = algorithm(name)
    gpus, elements = check_gpus(gpus), check_elements(elements)
    return module.closed_form(gpus, elements, **_options(name, gpus, master, options))


def plan_options(plan: Plan) -> dict:
    """The keyword options (as make_plan and closed_form take them) a plan was made with."""
    if plan.algorithm == "master" or plan.algorithm not in ALGORITHMS:
        return {}
    names = option_names(plan.algorithm)
    return {k: v for k, v in plan.options.items() if k in names}


def plan_closed_form(plan: Plan, elements: int) -> ClosedForm:
    """The exact figures of the algorithm and options a plan was made with, at N elements."""
    master = plan.options.get("master", 0) + 1 if plan.algorithm == "master" else None
    return closed_form(plan.algorithm, plan.gpus, elements, master=master, **plan_options(plan))


def option_text(plan: Plan) -> str:
    """The options that differ from their defaults, as users write them: 'chunks 4', 'nodes 2'."""
    module = ALGORITHMS.get(plan.algorithm)
    options = getattr(module, "Options", None)
    if options is None or plan.algorithm == "master":
        return ""
    defaults = options()
    shown = []
    for key, value in plan_options(plan).items():
        if value is not None and value != getattr(defaults, key, None):
            if key == "ring_order":
                value = ";".join(",".join(str(x) for x in ring) for ring in value)
            shown.append(f"{key.replace('_', ' ')} {value}")
    return ", ".join(shown)
