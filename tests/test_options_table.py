"""One vocabulary across commands: docs/options.md is the parsers' table, and a word means one thing."""

from __future__ import annotations

import re
from collections import defaultdict

from pathlib import Path

import pytest

from ringsim.cli import _options_table as table
from ringsim.cli import main

ROWS = table.rows()

# What every command's help of the option must say: the same word, the same meaning.
MEANING = {
    "--elements": "elements per",
    "--gpus": "GPUs",
    "--size": "bytes per",
    "--nodes": "M nodes",
    "--dtype": "element type",
    "--seed": "seed",
    "--master": "master GPU",
    "--algorithm": "all-reduce algorithm",
    "--topology": "topology",
    "--json": "JSON",
}


# Where one word needs two value forms, and why (keep this short: each entry is a clash).
TWO_FORMS = {"--svg": "sweep writes one plot (FILE); export writes one SVG per frame (DIR)"}
# nccl-tests' names for the same types (its -d), which `predict` takes as nccl-tests does.
ALIASES = {"float": "float32", "half": "float16", "double": "float64", "f8e4m3": "float8",
           "f8e5m2": "float8"}
# predict's --dtype takes nccl-tests' -d names, which include unsigned types the engine's
# arrays do not have (its one unsigned type is uint8): NCCL prices them as their signed twins.
NCCL_TESTS_ONLY = {"uint32", "uint64"}


def _by_name():
    named = defaultdict(list)
    for row in ROWS:
        if row.flags[0].startswith("-"):
            named[row.name].append(row)
    return named


def test_the_options_doc_is_the_parsers_table():
    # Rewrite it with: python -m ringsim.cli._options_table
    # the checkout's docs, also when the tests run against an installed (non-editable) ringsim
    doc = Path(__file__).resolve().parents[1] / "docs" / "options.md"
    assert doc.read_text(encoding="utf-8") == table.markdown(ROWS)


def test_every_command_is_in_the_table():
    listed = {row.command for row in ROWS}
    assert listed == set(table.commands())
    assert {"walk", "compare", "mpi", "tui", "lesson", "zero"} <= listed


def test_a_short_flag_means_one_long_option_everywhere():
    meaning = defaultdict(set)
    for row in ROWS:
        for flag in row.flags:
            if re.fullmatch(r"-\w", flag):
                meaning[flag].add(row.name)
    assert {flag: names for flag, names in meaning.items() if len(names) > 1} == {}
    assert meaning["-n"] == {"--elements"} and meaning["-g"] == {"--gpus"}


def test_the_same_option_has_the_same_value_form_everywhere():
    for name, rows in _by_name().items():
        plain = {r.metavar for r in rows if not r.metavar.startswith("{")}
        assert len(plain) <= (2 if name in TWO_FORMS else 1), (name, [(r.command, r.metavar) for r in rows])
        choices = [{ALIASES.get(c, c) for c in r.metavar.strip("{}").split(",")} - NCCL_TESTS_ONLY
                   for r in rows if r.metavar.startswith("{")]
        if choices:  # one list of choices, some commands taking part of it
            widest = max(choices, key=len)
            assert all(c <= widest for c in choices), (name, choices)
            assert not plain, (name, "choices in one command, free text in another")


def test_the_same_option_is_parsed_the_same_way_everywhere():
    from ringsim.cli import build_parser
    kinds = defaultdict(set)
    for command, sub in table.commands(build_parser()).items():
        for action in sub._actions:
            longs = [f for f in action.option_strings if f.startswith("--")]
            if longs and action.type is not None and action.help is not __import__("argparse").SUPPRESS:
                kinds[longs[0]].add(getattr(action.type, "__qualname__", repr(action.type)))
    assert {name: k for name, k in kinds.items() if len(k) > 1} == {}


@pytest.mark.parametrize("name", sorted(MEANING))
def test_the_same_option_means_the_same_thing(name):
    rows = _by_name()[name]
    assert rows, name
    for row in rows:
        assert MEANING[name].lower() in row.help.lower(), (row.command, name, row.help)


def test_a_default_the_help_states_is_the_real_default():
    stated = re.compile(r"\(default: ([\w.\-]+)[);,]")
    checked = 0
    for row in ROWS:
        match = stated.search(row.help)
        if match and row.default:
            checked += 1
            said, real = match.group(1), row.default
            if re.fullmatch(r"[\d.]+", said) and re.fullmatch(r"[\d.]+", real):
                said, real = float(said), float(real)
            assert said == real, (row.command, row.name, row.help, row.default)
    assert checked > 20


def test_zero_says_its_own_dtype():
    (row,) = [r for r in ROWS if r.command == "zero" and r.name == "--dtype"]
    assert row.default == "float16" and "default: float16" in row.help


def test_walk_prices_float32_as_the_others_do(capsys):
    walk = [r for r in ROWS if r.name == "--dtype" and r.command in ("walk", "compare", "timeline")]
    assert {r.default for r in walk} == {"float32"}
    assert all("int64" not in r.help for r in ROWS if r.name == "--dtype")
    assert main(["walk", "--time", "--json"]) == 0
    summary = capsys.readouterr().out.splitlines()[-1]
    assert '"dtype": "float32"' in summary and '"dtype_bytes": 4' in summary


def test_walk_says_its_own_gpu_limit(capsys):
    (row,) = [r for r in ROWS if r.command == "walk" and r.name == "--gpus"]
    assert "1..128" in row.help and "1,000,000" not in row.help.split(":")[0]
    assert main(["walk", "-g", "129"]) == 2
    assert "at most 128 GPUs" in capsys.readouterr().err


def test_mpi_documents_ranks_and_keeps_mpiexecs_n():
    from ringsim.cli import build_parser
    mpi = table.commands(build_parser())["mpi"]
    (ranks,) = [r for r in ROWS if r.command == "mpi" and r.name == "--ranks"]
    assert ranks.flags == ("--ranks",)
    assert mpi.parse_args(["-n", "6"]).ranks == 6 and mpi.parse_args(["--ranks", "3"]).ranks == 3
    assert "[-n" not in mpi.format_usage() and "  -n" not in mpi.format_help()


@pytest.mark.parametrize("text, nbytes", [("1GB", 10**9), ("1GiB", 2**30), ("16MiB", 16 * 2**20),
                                          ("64kB", 64_000), ("4096", 4096)])
def test_mpi_sizes_follow_the_units_vocabulary(text, nbytes):
    from ringsim.core.units import parse_size
    from ringsim.mpi.options import parse_size as mpi_size
    assert mpi_size(text) == parse_size(text) == nbytes


def test_tui_takes_a_topology(capsys):
    from ringsim.cli import build_parser
    from ringsim.cli._view_args import make_app
    args = build_parser().parse_args(["tui", "-g", "16", "--topology", "dgx-h100"])
    app = make_app(args)
    assert app.state.topology == "dgx-h100" and app.clock.topology == "dgx-h100"
    assert main(["tui", "-g", "12", "--topology", "pcie-gen4"]) == 2
    assert "12 GPUs do not fit pcie-gen4's nodes" in capsys.readouterr().err
    assert main(["tui", "--topology", "nope"]) == 2
    assert "one of flat" in capsys.readouterr().err


def test_nodes_on_a_topology_are_the_hierarchical_algorithms_nodes(capsys):
    # 2 nodes of 8 GPUs: the hierarchical ring's nodes are the machine's, not √16 = 4 of 4.
    assert main(["timeline", "--topology", "dgx-h100", "--nodes", "2", "-a", "hierarchical",
                 "--json"]) == 0
    import json
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    transfers = [r for r in records if r["type"] == "transfer"]
    across = [r for r in transfers if "across nodes" in r["phase"]]
    inside = [r for r in transfers if "inside each node" in r["phase"]]
    assert across and inside
    assert {r["level"] for r in across} == {"across"} and {r["level"] for r in inside} == {"inside"}


def test_compare_and_sweep_price_the_hierarchical_ring_on_the_machines_nodes(capsys):
    import json
    from ringsim.algorithms import closed_form, make_plan
    from ringsim.cost.model import CostModel, price
    model = CostModel.of("dgx-h100")
    machine = price(make_plan("hierarchical", 16, nodes=2), 1 << 20, model).seconds
    assert main(["compare", "--time", "--json", "--topology", "dgx-h100", "--nodes", "2",
                 "--elements", str(1 << 20)]) == 0
    row = next(json.loads(line) for line in capsys.readouterr().out.splitlines()
               if '"hierarchical"' in line)
    assert row["seconds"] == pytest.approx(machine, rel=1e-9)
    assert row["steps"] == int(closed_form("hierarchical", 16, 1 << 20, nodes=2).steps.value)
    assert main(["sweep", "--json", "--topology", "dgx-h100", "--nodes", "2", "--sizes", "4MiB"]) == 0
    point = json.loads(capsys.readouterr().out.splitlines()[0])
    assert point["algorithms"]["hierarchical"]["seconds"] == pytest.approx(machine, rel=1e-9)


def test_overlap_prices_the_hierarchical_ring_on_the_machines_nodes(capsys):
    import json
    from ringsim.algorithms.timing import estimate
    from ringsim.cost.model import CostModel
    assert main(["overlap", "--layers", "64M", "-g", "16", "--topology", "dgx-h100", "-a",
                 "hierarchical", "--json"]) == 0
    (bucket,) = json.loads(capsys.readouterr().out)["buckets"]
    seconds = estimate("hierarchical", 16, bucket["elements"], CostModel.of("dgx-h100"), nodes=2).seconds
    assert bucket["end"] - bucket["start"] == pytest.approx(seconds, rel=1e-9)
