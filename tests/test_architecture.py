"""The house's shape, read from the source: no import circles, packages in their layers, no
module reaching for another's private names, and no algorithm named in a branch outside
ringsim/algorithms/ (docs/architecture.md).

Every import counts, those inside functions too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ringsim.algorithms import ALGORITHMS

ROOT = Path(__file__).resolve().parents[1] / "ringsim"

# Bottom to top: a package may import its own files and the packages of lower layers.
LAYERS = [
    {"core"},
    {"cost", "execute"},
    {"algorithms"},
    {"sim", "api", "timeline"},
    {"figures"},
    {"training"},
    {"studies", "mpi"},
    {"lessons"},
    {"tui"},
    {"cli"},
    {"__init__", "__main__"},  # the package's face and `python -m ringsim`
]
LAYER = {package: level for level, packages in enumerate(LAYERS) for package in packages}
# The executor factory loads the MPI executor only when an MPI run is asked for.
# A Simulation and a Timeline draw themselves in Jupyter through figures/, loaded only when a
# notebook asks.
PLUG_INS = {("execute/backend.py", "mpi"), ("sim/simulation.py", "figures"),
            ("timeline/model.py", "figures")}


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _from_target(node: ast.ImportFrom, package: str) -> str:
    """The module a `from X import ...` in `package` names, its dots resolved."""
    if not node.level:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The ringsim modules a file imports, anywhere in it."""
    here = _module(path)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            target = _from_target(node, package)
            for alias in node.names:
                name = f"{target}.{alias.name}"
                found.add(name if name in modules else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in modules and m != here}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    files = {_module(p): p for p in ROOT.rglob("*.py")}
    return {m: _imports(p, set(files)) for m, p in files.items()}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_no_file_imports_itself_through_others(graph):
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done

    def walk(module: str, path: list[str]) -> None:
        state[module] = 1
        for dep in sorted(graph[module]):
            if state.get(dep) == 1:
                cycle = path[path.index(dep):] + [dep]
                pytest.fail("import circle: " + " -> ".join(cycle))
            if dep not in state:
                walk(dep, path + [dep])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            walk(module, [module])


def test_every_package_imports_only_layers_below_it(graph):
    assert set(LAYER) >= {_package(m) for m in graph}, "a new package needs its layer here"
    wrong = []
    for module, deps in graph.items():
        here = _package(module)
        for dep in deps:
            there = _package(dep)
            file = module.replace("ringsim.", "", 1).replace(".", "/") + ".py"
            if there == here or (file, there) in PLUG_INS or there == "__init__" and dep == "ringsim":
                continue
            if LAYER[there] >= LAYER[here]:
                wrong.append(f"{module} -> {dep}")
    assert not wrong, "imports that run up or sideways: " + ", ".join(sorted(wrong))


def _names_compared(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) for each algorithm name a branch tests: x == "ring", x in ("tree", …).

    `"master" in options` asks for an option (master's option shares its name) and passes.
    """
    def named(side) -> list[str]:
        values = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
        return [v.value for v in values if isinstance(v, ast.Constant) and v.value in ALGORITHMS]

    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            left = node.left
            for op, right in zip(node.ops, node.comparators):
                sides = [right] if isinstance(op, (ast.In, ast.NotIn)) else [left, right]
                hits += [(node.lineno, name) for side in sides for name in named(side)]
                left = right
    return hits


def test_no_branch_outside_the_algorithms_names_an_algorithm():
    found = []
    for path in ROOT.rglob("*.py"):
        if path.relative_to(ROOT).parts[0] == "algorithms":
            continue
        for line, name in _names_compared(ast.parse(path.read_text(encoding="utf-8"))):
            found.append(f"{path.relative_to(ROOT)}:{line} compares with {name!r}")
    assert not found, "; ".join(found)


def test_the_name_check_catches_what_it_should():
    caught = _names_compared(ast.parse('if a == "master" or b in ("tree", "x") or "ring" != c: pass'))
    assert [name for _, name in caught] == ["master", "tree", "ring"]
    assert _names_compared(ast.parse('d = {"ring": 1}; f("ring"); "master" in options')) == []


def _private_uses(tree: ast.AST, here: str, package: str, modules: set[str]) -> list[tuple[int, str]]:
    """(line, name) for each private name (`_x`) this module takes from another ringsim module:
    `from .m import _x`, or `m._x` on a module it imported. A private module (`_trees.py`)
    may be imported by the files of its own package."""
    def private(name: str) -> bool:
        return name.startswith("_") and not name.startswith("__")

    bound: dict[str, str] = {}  # local name -> the ringsim module it stands for
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _from_target(node, package)
            for alias in node.names:
                full = f"{target}.{alias.name}"
                if full in modules:
                    bound[alias.asname or alias.name] = full
                    if private(alias.name) and target != package:
                        hits.append((node.lineno, full))
                elif target in modules and target != here and private(alias.name):
                    hits.append((node.lineno, full))
        elif isinstance(node, ast.Import):
            bound.update({alias.asname or alias.name: alias.name for alias in node.names
                          if alias.name in modules})
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and private(node.attr)
                and isinstance(node.value, ast.Name) and node.value.id in bound):
            hits.append((node.lineno, f"{bound[node.value.id]}.{node.attr}"))
    return hits


def test_no_module_takes_another_modules_private_names():
    files = {_module(p): p for p in ROOT.rglob("*.py")}
    found = []
    for module, path in sorted(files.items()):
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{path.relative_to(ROOT)}:{line} takes {name}"
                  for line, name in _private_uses(tree, module, package, set(files))]
    assert not found, "give these a public name where they are defined: " + "; ".join(found)


def test_the_private_name_check_catches_what_it_should():
    modules = {"ringsim.cost.nccl_call", "ringsim.algorithms._btree", "ringsim.cost.ctas"}
    source = ("from .nccl_call import _check, RING\n"
              "from ..algorithms import _btree\n"
              "from . import nccl_call as call\n"
              "call._pick(1); call.__name__; _btree.Tree\n")
    caught = _private_uses(ast.parse(source), "ringsim.cost.ctas", "ringsim.cost", modules)
    assert caught == [(1, "ringsim.cost.nccl_call._check"), (2, "ringsim.algorithms._btree"),
                      (4, "ringsim.cost.nccl_call._pick")]
    inside = "from . import _btree\n_btree.floor_log2(1)\n"
    assert _private_uses(ast.parse(inside), "ringsim.algorithms._chains", "ringsim.algorithms",
                         modules) == []
