"""The registry of all-reduce algorithms: each module turns (G, options) into a Plan.

Each algorithm module exports SPEC, an AlgorithmSpec (spec.py). To add an algorithm:

1. Write ringsim/algorithms/NAME.py: an `Options` frozen dataclass (every field defaulted,
   none at all is fine) and plan, closed_form, transfers, seconds and busiest_gpu, each
   taking those options as keywords (check_options too, when they need checking).
2. End it with SPEC = AlgorithmSpec(NAME, title, summary, Options, plan, ..., shape=Shape.RING).
3. Import it below and add it to the list that builds ALGORITHMS.
The CLI's choices, compare, sweep, the TUI and the lessons then find it in the registry.
"""

from __future__ import annotations

import dataclasses
import functools
import typing

from ..core.checks import check_elements, check_gpus, echo
from ..core.naming import plural
from ..core.arguments import argument, flag
from ..core.errors import RingsimError
from ..core.formula import ClosedForm
from ..core.plan import Plan
from . import (bidirectional_ring, double_tree, halving_doubling, hierarchical, master, naive,
               nccl_tree, nvls, recursive_doubling, ring, tree)
from ._fold import symbols
from ._ring_orders import rails_size
from .spec import AlgorithmSpec

ALGORITHMS: dict[str, AlgorithmSpec] = {m.SPEC.name: m.SPEC for m in (
    ring, master, naive, tree, double_tree, recursive_doubling, halving_doubling,
    bidirectional_ring, hierarchical, nccl_tree, nvls)}
DEFAULT_ALGORITHM = "ring"  # what every command runs when -a is not given

# A plan keeps its columns per transfer (about 40 bytes), and building one briefly needs a
# few times that: 5,000,000 transfers stay well under 1 GB. Counts for any G come from
# closed_form, which builds no plan.
MAX_PLAN_TRANSFERS = 5_000_000


def algorithm(name: str) -> AlgorithmSpec:
    """The spec of a named algorithm, or a RingsimError listing the known ones."""
    try:
        return ALGORITHMS[name]
    except (KeyError, TypeError):
        known = ", ".join(ALGORITHMS)
        raise RingsimError(f"unknown algorithm {echo(name)}; choose one of: {known}") from None


def nccl_algorithm(nccl_name: str) -> str:
    """The registered algorithm that runs NCCL's algorithm `nccl_name` ("Ring", "Tree") as NCCL does."""
    for name, spec in ALGORITHMS.items():
        if spec.nccl_name == nccl_name:
            return name
    known = ", ".join(s.nccl_name for s in ALGORITHMS.values() if s.nccl_name)
    raise RingsimError(f"no algorithm here runs NCCL's {nccl_name!r}; these do: {known}")


# Every option an algorithm's Options holds (tests/test_option_declarations.py holds this list
# to the registry), in the order the commands list their flags, the master first: an error about
# several options names them in this order, and lists of them are shown in it.
OPTION_ORDER = ("master", "chunks", "channels", "ring_order", "nodes", "gpus_per_node", "tree_parents")


def option_names(name: str) -> tuple[str, ...]:
    """The keyword options algorithm `name` takes."""
    return tuple(f.name for f in dataclasses.fields(algorithm(name).Options))


def default_options(name: str) -> dict:
    """Algorithm `name`'s options at their defaults, as users write them (the master: GPU 1)."""
    spec = algorithm(name)
    return spec.written(**dataclasses.asdict(spec.Options()))


def algorithms_taking(option: str) -> list[str]:
    """The registered algorithms that take `option`, in the registry's order."""
    return [n for n in ALGORITHMS if option in option_names(n)]


@functools.cache
def whole_number_options() -> tuple[str, ...]:
    """The options users write as a whole number, as their Options fields are typed (the
    master, chunks, nodes); the others (ring orders, trees) are text the algorithm reads."""
    whole = {name for spec in ALGORITHMS.values()
             for name, kind in typing.get_type_hints(spec.Options).items() if kind in (int, int | None)}
    return tuple(o for o in OPTION_ORDER if o in whole)


def given_options(source: object) -> tuple[tuple[str, object], ...]:
    """The algorithm options an object's attributes give (an argparse Namespace's flags), as
    (name, value) pairs for a Scenario, in OPTION_ORDER; None (or no attribute): not given."""
    return tuple((name, getattr(source, name)) for name in OPTION_ORDER
                 if getattr(source, name, None) is not None)


option_flag = flag  # an option as a command-line flag: ring_order is --ring-order


def check_option_names(name: str, given: dict) -> None:
    """Refuse, in one line, an option algorithm `name` does not take, naming those that take it."""
    allowed = option_names(name)
    for option, value in given.items():
        if option not in allowed and value is not None:
            users = algorithms_taking(option)
            if users == [option]:  # an option named after its algorithm (--master) says so
                raise RingsimError(f"{argument(option)} only applies to the {option} algorithm")
            takes = ", ".join(argument(o) for o in allowed) if allowed else "no options"
            where = f" ({argument(option)} is for {', '.join(users)})" if users else ""
            raise RingsimError(f"{name} takes {takes}, not {argument(option)}{where}")


def check_options(name: str, gpus: int, given: dict) -> dict:
    """The algorithm's checked options from those users give (None: the default)."""
    given = {k: v for k, v in given.items() if v is not None}
    check_option_names(name, given)
    return algorithm(name).check(gpus, **given)


def make_plan(name: str = "ring", gpus: int = 4, **options) -> Plan:
    """The plan of algorithm `name` for G GPUs, with its options as users give them:
    master= (the 1-based master GPU), chunks=, channels=, ring_order=, nodes=."""
    spec = algorithm(name)
    gpus = check_gpus(gpus)
    checked = check_options(name, gpus, options)
    count = spec.transfers(gpus, **checked)
    if count > MAX_PLAN_TRANSFERS:
        raise RingsimError(
            f"a {name} plan for {gpus:,} GPUs holds {count:,} transfers, more than the "
            f"{MAX_PLAN_TRANSFERS:,} a plan may hold (MAX_PLAN_TRANSFERS, about "
            f"{MAX_PLAN_TRANSFERS * 40 // 10**6} MB); for the counts at any G use "
            f"ringsim.closed_form or `ringsim compare`")
    return spec.plan(gpus, **checked)


def transfers(name: str, gpus: int, **options) -> int:
    """The number of transfers algorithm `name`'s plan for G GPUs holds (no plan is built)."""
    gpus = check_gpus(gpus)
    return algorithm(name).transfers(gpus, **check_options(name, gpus, options))


def closed_form(name: str, gpus: int, elements: int, **options) -> ClosedForm:
    """Algorithm `name`'s exact figures at G GPUs and N elements each (no plan is built)."""
    spec = algorithm(name)
    gpus, elements = check_gpus(gpus), check_elements(elements)
    return spec.closed_form(gpus, elements, **check_options(name, gpus, options))


def checked_options(plan: Plan) -> dict:
    """The checked options a registered algorithm's plan was made with ({} for other plans)."""
    if plan.algorithm not in ALGORITHMS:
        return {}
    names = option_names(plan.algorithm)
    return {k: v for k, v in plan.options.items() if k in names}


def plan_options(plan: Plan) -> dict:
    """The keyword options (as make_plan and closed_form take them) a plan was made with."""
    if plan.algorithm not in ALGORITHMS:
        return {}
    return algorithm(plan.algorithm).written(**checked_options(plan))


def plan_closed_form(plan: Plan, elements: int) -> ClosedForm:
    """The exact figures of the algorithm and options a plan was made with, at N elements."""
    return closed_form(plan.algorithm, plan.gpus, elements, **plan_options(plan))


def option_label(name: str, gpus: int, options: dict) -> str:
    """Checked options as every title shows them: 'GPU3', '4 chunks', 'ring order rails:8' ('' for none)."""
    # The spec's label words them where it has one; otherwise each option off its default is named.
    spec = ALGORITHMS.get(name)
    if spec is None:
        return ""
    if spec.label is not None:
        return spec.label(**options)
    defaults = spec.Options()
    shown = []
    rails = rails_size(options.get("ring_order"), gpus)
    for key, value in options.items():
        if value is not None and value != getattr(defaults, key, None):
            if key == "channels" and rails == value:
                continue  # rails:P is P rings: the order says it
            if key == "ring_order":
                value = f"rails:{rails}" if rails else ";".join(",".join(str(x) for x in ring)
                                                                  for ring in value)
            shown.append(_option_words(key, value))
    return ", ".join(shown)


def _option_words(key: str, value) -> str:
    """One option as a title says it: a count before its noun ('2 nodes', '4 chunks', '1 GPU
    per node'), any other value after its name ('ring order 1,3,2,4')."""
    words = key.replace("_", " ")
    if isinstance(value, int) and not isinstance(value, bool):
        if words.startswith("gpus "):
            return f"{plural(value, 'GPU')} {words[5:]}"
        if words.endswith("s"):
            return plural(value, words[:-1])
    return f"{words} {value}"


def option_text(plan: Plan) -> str:
    """The plan's options as a title shows them: '4 chunks', '2 nodes', 'GPU3' ('' for none)."""
    return option_label(plan.algorithm, plan.gpus, checked_options(plan))


def given_text(name: str, gpus: int, given: dict) -> str:
    """Options given as users write them (master=9), as a plan's title shows them ('GPU9')."""
    given = {k: v for k, v in given.items() if v is not None}
    if not given:
        return ""  # a row of defaults keeps its bare title, without the 'GPU1' a label spells out
    return option_label(name, gpus, check_options(name, gpus, given))


def given_title(name: str, gpus: int, given: dict) -> str:
    """A run priced without a plan, as walk titles its plan: 'Single-GPU master (GPU9)'."""
    return with_options(algorithm(name).title_for(**given), given_text(name, gpus, given))


def with_options(title: str, words: str) -> str:
    """A title followed by its options' words in brackets, where there are any: 'tree (4
    chunks)'; a title that ends in brackets takes them inside its own, after a semicolon."""
    if not words:
        return title
    return f"{title[:-1]}; {words})" if title.endswith(")") else f"{title} ({words})"


def plan_hub(plan: Plan) -> int | None:
    """The 0-based GPU every transfer of the plan goes into or out of, as its algorithm
    declares it (the master); None where there is none."""
    spec = ALGORITHMS.get(plan.algorithm)
    return None if spec is None else spec.hub(**checked_options(plan))


def named_with_options(name: str, plan: Plan) -> str:
    """`name` followed by the plan's options in brackets, where it has any: 'tree (4 chunks)'."""
    return with_options(name, option_text(plan))


def plan_nodes(plan: Plan) -> int | None:
    """How many nodes of consecutive GPUs the plan was made for, where its options say: M nodes
    (hierarchical), nodes of L GPUs (nccl-tree's chains), or the nodes of P GPUs of a rails:P
    ring order; None where they say none."""
    options = plan.options
    if options.get("nodes"):
        return options["nodes"]
    if options.get("gpus_per_node"):
        return plan.gpus // options["gpus_per_node"]
    rails = rails_size(options.get("ring_order"), plan.gpus)
    return plan.gpus // rails if rails else None

