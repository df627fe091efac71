"""The table of every option of every command, read from the argparse parsers themselves.

`python -m ringsim.cli._options_table` rewrites docs/options.md; tests/test_options_table.py
fails when the file and the parsers differ, so a new command or option shows up in the table
as soon as it is registered (no list of commands is kept here).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "options.md"
HEADER = """# Every option of every command

Generated from the commands' argument parsers by `python -m ringsim.cli._options_table`
(tests/test_options_table.py holds this file to the parsers). One word means one thing in
every command: `-n`/`--elements` is elements per GPU, `-g`/`--gpus` the number of GPUs,
`--size` bytes per GPU (units as in `ringsim/core/units.py`: GB = 10^9 bytes, GiB = 2^30),
`--nodes` the nodes the GPUs sit in, `--dtype` the element type (float32 unless a command
says otherwise), `--seed` a random seed. Hidden aliases kept for habit (`mpi -n` for
`--ranks`, `export --size` for `--screen`) are not listed.
"""


@dataclass(frozen=True)
class Row:
    """One documented option of one command."""

    command: str
    flags: tuple[str, ...]  # as the help shows them: ('-g', '--gpus')
    metavar: str            # what follows the flag ('G', '{a,b}'), '' for a switch
    default: str            # the parsed default as text, '' when there is none
    help: str

    @property
    def name(self) -> str:
        """The long flag ('--gpus'), or the positional's name."""
        longs = [f for f in self.flags if f.startswith("--")]
        return longs[0] if longs else self.flags[0]


def commands(parser: argparse.ArgumentParser | None = None) -> dict[str, argparse.ArgumentParser]:
    """Every subcommand's parser, by name, in --help order."""
    if parser is None:
        from . import build_parser
        parser = build_parser()
    for action in parser._actions:  # argparse keeps its subcommands only here
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _metavar(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.metavar is not None:
        return str(action.metavar)
    if action.choices is not None:
        return "{" + ",".join(map(str, action.choices)) + "}"
    return action.dest.upper()


def _default(action: argparse.Action) -> str:
    value = action.default
    if value is None or value is argparse.SUPPRESS or action.nargs == 0 or value == []:
        return ""
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return f"{value[0]}x{value[1]}"  # a W×H pair
    return str(value)


def rows(parser: argparse.ArgumentParser | None = None) -> list[Row]:
    """Every documented option of every command (help and hidden aliases left out)."""
    out = []
    for name, sub in commands(parser).items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction) or action.help is argparse.SUPPRESS:
                continue
            flags = tuple(action.option_strings) or (action.metavar or action.dest,)
            help_text = (action.help or "").replace("%%", "%")
            out.append(Row(name, flags, _metavar(action), _default(action), help_text))
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(table: list[Row]) -> str:
    """docs/options.md: the header, then one table per command."""
    parts = [HEADER]
    for command in dict.fromkeys(r.command for r in table):
        parts.append(f"\n## ringsim {command}\n\n| option | value | default | meaning |\n"
                     "| --- | --- | --- | --- |")
        for r in (r for r in table if r.command == command):
            flags = ", ".join(f"`{f}`" for f in r.flags)
            value = f"`{_cell(r.metavar)}`" if r.metavar else ""
            default = f"`{_cell(r.default)}`" if r.default else ""
            parts.append(f"| {flags} | {value} | {default} | {_cell(r.help)} |")
    return "\n".join(parts) + "\n"


def main() -> None:
    """Rewrite docs/options.md from the parsers."""
    DOC.write_text(markdown(rows()), encoding="utf-8")
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
