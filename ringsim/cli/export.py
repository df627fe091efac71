"""ringsim export --svg DIR: one SVG per iteration, the same screen the TUI shows, for slides."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from ..errors import RingsimError
from .common import add_scenario_arguments
from .tui import add_view_arguments, make_app

ORDER = 50
HELP = "write the TUI's screen after every iteration as numbered SVG files (for slides)"


def _size(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"(\d+)[x×](\d+)", text.strip())
    if not match or int(match[1]) < 20 or int(match[2]) < 10:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 120x40, got {text!r}")
    return int(match[1]), int(match[2])


def register(sub) -> None:
    parser = sub.add_parser("export", help=HELP, description=HELP + ": 00-start.svg, "
                            "01-reduce-scatter-1.svg, …")
    parser.add_argument("--svg", required=True, metavar="DIR", type=Path,
                        help="folder for the SVG files (created if missing)")
    parser.add_argument("--size", type=_size, default=(120, 40), metavar="WxH",
                        help="terminal size in characters (default: 120x40)")
    add_scenario_arguments(parser)
    add_view_arguments(parser)
    parser.set_defaults(run=run)


def file_name(index: int, step) -> str:
    """'00-start.svg', '01-reduce-scatter-1.svg', '01-reduce-to-gpu1.svg'."""
    if step is None:
        return f"{index:02d}-start.svg"
    slug = re.sub(r"[^a-z0-9]+", "-", step.phase.lower()).strip("-")
    if step.iterations > 1:
        slug += f"-{step.iteration}"
    return f"{index:02d}-{slug}.svg"


def run(args: argparse.Namespace) -> int:
    folder: Path = args.svg
    if folder.exists() and not folder.is_dir():
        raise RingsimError(f"{folder} exists and is not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    app = make_app(args)
    written: list[Path] = []

    async def frames(pilot) -> None:
        await pilot.pause()  # the auto-pilot starts before the screen is mounted
        for index in range(len(app.sim.plan) + 1):
            await app.goto(index)
            await pilot.pause()
            path = folder / file_name(index, app.sim.current)
            path.write_text(app.export_screenshot(title=f"ringsim · {app.sim.banner}"), encoding="utf-8")
            written.append(path)
        app.exit()

    app.run(headless=True, size=args.size, auto_pilot=frames)
    if app.return_code not in (0, None):
        raise RingsimError("the export stopped early; no complete set of frames was written")
    print(f"wrote {len(written)} SVG files to {folder}")
    return 0
