"""ringsim export --svg DIR: one SVG per iteration, the same screen the TUI shows, for slides."""

from __future__ import annotations

import argparse
import os
import re
import stat
import time
from pathlib import Path

from ..core.errors import RingsimError
from ..core.files import check_folder, make_folder
from ..core.naming import plural
from ..core.textout import escaped
from ..core.width import say
from ..tui.limits import MAX_GPUS as TUI_MAX_GPUS, MIN_SIZE, MIN_SIZE_PRESENT  # below them a slide only says the screen is too small
from ._view_args import add_view_arguments, elements_follow_gpus, make_app
from .common import add_scenario_arguments

ORDER = 50
HELP = "write the TUI's screen after every iteration as numbered SVG files (for slides)"
# A frame costs time and memory in proportion to its cells (30000x10000 took 92 s and 3 GB);
# 400x200 is larger than any screen a slide needs, and renders in a fraction of a second.
MAX_SIZE = (400, 200)
# Measured: 64 GPUs, 64 channels at 400x200 wrote 127 frames of 2.2 MB in 120 s, about 27
# bytes and 12 µs per cell of a frame; the estimate rounds both up.
BYTES_PER_CELL, SECONDS_PER_CELL = 30, 1.5e-5
MAX_BYTES, MAX_SECONDS = 100 << 20, 60.0
FRAME_FILE = re.compile(r"^\d{2,}-[a-z0-9-]+\.(svg|png)$")  # the names file_name() gives
# The frames the last export wrote into the folder, one name a line: the next export replaces
# exactly these, so files of the user's own with frame-like names (01-intro.png) are kept.
MANIFEST = ".ringsim-export"
# The longest export (64 GPUs, 64 channels) lists a few hundred names, some kilobytes: a
# larger manifest is not one ringsim wrote.
MANIFEST_MAX = 1 << 20


def _folder(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("needs a folder name (use --svg . for this folder)")
    return Path(text)


def check_work(frames: int, size: tuple[int, int], png: bool,
               frame: tuple[int, float] | None = None) -> None:
    """Refuse an export whose frames would pass MAX_BYTES or MAX_SECONDS: before any is drawn
    from their cells, and once the first is drawn (`frame`: its bytes and seconds) from it,
    with room for later frames a half denser (a dense heat map on a small screen takes 100
    bytes a cell, a sparse large screen 6)."""
    cells = frames * size[0] * size[1]
    nbytes, seconds = cells * BYTES_PER_CELL * (2 if png else 1), cells * SECONDS_PER_CELL
    if frame is not None:
        nbytes, seconds = frames * frame[0] * 1.5 * (2 if png else 1), frames * frame[1] * 1.5
    if nbytes > MAX_BYTES or seconds > MAX_SECONDS:
        raise RingsimError(f"the export would write {frames:,} frames of {size[0]}x{size[1]}: about "
                           f"{nbytes / 2**20:,.0f} MiB in {seconds:,.0f} s (at most "
                           f"{MAX_BYTES >> 20} MiB and {MAX_SECONDS:.0f} s); use a smaller --screen, "
                           f"fewer GPUs, or fewer channels or chunks")


def _size(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"(\d{1,9})[x×](\d{1,9})", text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 120x40, got {text[:40]!r}")
    width, height = int(match[1]), int(match[2])
    if not (MIN_SIZE[0] <= width <= MAX_SIZE[0] and MIN_SIZE[1] <= height <= MAX_SIZE[1]):
        raise argparse.ArgumentTypeError(
            f"the size must be from {MIN_SIZE[0]}x{MIN_SIZE[1]} to {MAX_SIZE[0]}x{MAX_SIZE[1]} "
            f"characters, got {width}x{height}")
    return width, height


def register(sub) -> None:
    """Add the `export` subcommand to `sub`."""
    parser = sub.add_parser("export", help=HELP, description=HELP + ": 00-start.svg, "
                            "01-reduce-scatter-1.svg, … The SVGs name locally installed fonts "
                            "(nothing is loaded from the internet).")
    parser.add_argument("--svg", required=True, metavar="DIR", type=_folder,
                        help="folder for the SVG files (created if missing); a later export "
                             "into it replaces the frames of the earlier one and nothing else")
    # --size is bytes per GPU in every other command: the terminal's size is --screen.
    parser.add_argument("--screen", type=_size, default=(120, 40), metavar="WxH", dest="size",
                        help=f"terminal size in characters, from {MIN_SIZE[0]}x{MIN_SIZE[1]} "
                             f"({MIN_SIZE_PRESENT[0]}x{MIN_SIZE_PRESENT[1]} with --present) to "
                             f"{MAX_SIZE[0]}x{MAX_SIZE[1]} (default: 120x40)")
    parser.add_argument("--size", type=_size, dest="size", help=argparse.SUPPRESS)  # older scripts
    parser.add_argument("--crop", action="store_true",
                        help="only the GPU view and the transfer list: no banner, counters, "
                             "footer or window frame")
    parser.add_argument("--png", action="store_true",
                        help="also write a PNG beside each SVG (needs resvg-py: "
                             "pip install '.[export]' from a clone of ringsim)")
    add_scenario_arguments(parser, most_gpus=TUI_MAX_GPUS)
    elements_follow_gpus(parser)
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


def frame_names(steps, png: bool) -> list[str]:
    """The file names an export of these steps writes, in order (PNGs after their SVGs)."""
    names = [file_name(index, step) for index, step in enumerate([None, *steps])]
    return [name for svg in names for name in ([svg, svg[:-4] + ".png"] if png else [svg])]


def _not_a_list(info: os.stat_result) -> str:
    """What a manifest is when it is not the small file of names export writes ('' if it is)."""
    mode = info.st_mode
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if not stat.S_ISREG(mode):
        return "a device or socket"
    if info.st_size > MANIFEST_MAX:
        return f"a file of {info.st_size / 2**20:,.1f} MiB (at most 1 MiB)"
    return ""


def earlier_frames(folder: Path) -> set[str]:
    """The frames the last export wrote into `folder`, as its manifest lists them (none
    without one); a manifest that is not a small regular file is refused."""
    path = folder / MANIFEST
    try:
        what = _not_a_list(path.lstat())
        # Never through a link, never waiting on a FIFO put there after the lstat.
        handle = None if what else os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return set()
    except OSError as error:
        raise RingsimError(f"cannot read {path}: {error.strerror or error}") from None
    if handle is not None:
        with open(handle, "rb") as manifest:
            what = _not_a_list(os.fstat(handle))
            data = b"" if what else manifest.read(MANIFEST_MAX + 1)
    if what:
        raise RingsimError(f"{path} is {what}, not the short list of frames an export writes there: "
                           f"remove it, or export into another folder")
    lines = data.decode("utf-8", "replace").splitlines()
    return {line for line in lines if FRAME_FILE.match(line)}  # never a path out of the folder


def check_names(folder: Path, names: list[str]) -> set[str]:
    """The frames an earlier export listed in the folder; refuse to overwrite any other file."""
    if not folder.is_dir():
        return set()
    ours = earlier_frames(folder)
    clash = [name for name in names
             if name not in ours and ((folder / name).exists() or (folder / name).is_symlink())]
    if clash:
        more, them = (f" and {plural(len(clash) - 1, 'more file')} this export writes",
                      "them") if clash[1:] else ("", "it")
        listed = (f"its {MANIFEST} does not list" if (folder / MANIFEST).exists()
                  else f"no {MANIFEST} lists (an older ringsim wrote none)")
        raise RingsimError(f"{escaped(folder)} already holds {escaped(clash[0])}{more}, which {listed}: export "
                           f"overwrites only the frames listed there, so delete {them} if an "
                           f"earlier export wrote {them}, or export into another folder")
    return ours


def check_screen(size: tuple[int, int], present: bool) -> None:
    """Refuse a --screen the TUI's view does not fit (its slides would only say so)."""
    need = MIN_SIZE_PRESENT if present else MIN_SIZE
    if size[0] < need[0] or size[1] < need[1]:
        mode = " in presentation mode (--present)" if present else ""
        raise RingsimError(f"--screen {size[0]}x{size[1]} is too small: the TUI needs at least "
                           f"{need[0]}x{need[1]}{mode}")


def run(args: argparse.Namespace) -> int:
    """Run `ringsim export` on the parsed `args`; returns the exit status."""
    folder: Path = args.svg
    check_folder(folder)
    check_screen(args.size, args.present)
    app = make_app(args)  # every scenario check first: a refused run leaves no folder behind
    if args.png:
        try:
            import resvg_py  # noqa: F401
        except ImportError:
            raise RingsimError("--png needs resvg-py: pip install '.[export]' from a clone of "
                               "ringsim (or pip install resvg-py)") from None
    check_work(len(app.sim.plan) + 1, args.size, args.png)
    ours = check_names(folder, frame_names(app.sim.plan.steps, args.png))
    made = not folder.exists()
    make_folder(folder)
    import shutil
    import tempfile
    # Frames go to a private folder beside the target and move in only when all are written:
    # a failed run leaves no half set, and a folder used before keeps no frame of the old run.
    final = folder
    folder = Path(tempfile.mkdtemp(prefix=".ringsim-export-", dir=final))
    try:
        return _export(args, app, folder, final, ours)
    except RingsimError:
        if made:  # refused once the first frame was drawn: leave no folder behind either
            shutil.rmtree(final, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _export(args: argparse.Namespace, app, folder: Path, final: Path, ours: set[str]) -> int:
    """Draw every frame into `folder`, then replace the old frames of `final` (`ours`) with them."""
    from ..tui.svg import screen_strips, screen_svg, svg_to_png
    written: list[Path] = []
    failed: list[OSError] = []
    refused: list[RingsimError] = []  # the first frame showed the rest would pass the limits
    cut: list[tuple[str, tuple[str, ...]]] = []  # frames whose boxes hold more than they show
    # Cropped frames wait for the tallest: every frame of a deck takes its height, or a slide
    # that fits its picture to the page would scale the GPUs differently from one to the next.
    kept: list[tuple[Path, str, list, tuple[int, int]]] = []

    def write(path: Path, svg: str) -> None:
        path.write_text(svg, encoding="utf-8")
        if args.png:
            path.with_suffix(".png").write_bytes(svg_to_png(svg))
        written.append(path)

    async def frames(pilot) -> None:
        await pilot.pause()  # the auto-pilot starts before the screen is mounted
        app.simulator.add_class("-slide")  # no key footer, no "paused", no keys in the hints
        if args.crop:
            app.simulator.add_class("-crop")
        await app.show_state()  # the first frame again, as a slide
        await pilot.pause()
        try:
            for index in range(len(app.sim.plan) + 1):
                started = time.perf_counter()
                app.goto(index)
                await pilot.pause()
                if args.crop:  # the cropped transfer box takes its list's height a pass later
                    app.simulator.say_more()
                    await pilot.pause()
                path = folder / file_name(index, app.sim.current)
                title = f"ringsim · {app.sim.banner}"
                if args.crop:
                    kept.append((path, title, screen_strips(app), app.simulator.crop_rows()))
                else:
                    write(path, screen_svg(app, title))
                if index == 0:
                    # what the first frame took says what the rest will, better than its cells
                    drawn = len(screen_svg(app, title)) if args.crop else path.stat().st_size
                    check_work(len(app.sim.plan) + 1, args.size, args.png,
                               (drawn, time.perf_counter() - started))
                if app.simulator.cut:
                    cut.append((path.name, app.simulator.cut))
            # The rows under a shorter frame's transfer list are the screen's own background.
            tallest = max((end - first for *_, (first, end) in kept), default=0)
            for path, title, strips, (first, _) in kept:
                first = min(first, len(strips) - tallest)
                write(path, screen_svg(app, title, (first, first + tallest), strips))
        except OSError as error:  # a full disk, a folder made read-only meanwhile
            failed.append(error)
        except RingsimError as error:
            refused.append(error)
        app.exit()

    app.run(headless=True, size=args.size, auto_pilot=frames)
    if refused:
        raise refused[0]
    if failed:
        raise RingsimError(f"the export stopped after {len(written)} frames: "
                           f"{failed[0].strerror or failed[0]}")
    if app.return_code not in (0, None) or len(written) != len(app.sim.plan) + 1:
        raise RingsimError("the export stopped early; no complete set of frames was written")
    try:
        for name in ours:
            old = final / name
            if old.is_file() and not old.is_symlink():
                old.unlink()
        names = sorted(path.name for path in folder.iterdir())
        # The manifest too is written beside the frames and renamed into place: a rename
        # replaces a link where it stands instead of writing to the file it points at.
        (folder / MANIFEST).write_text("".join(f"{name}\n" for name in names), encoding="utf-8")
        for name in [*names, MANIFEST]:
            (folder / name).replace(final / name)
    except OSError as error:
        raise RingsimError(f"cannot move the frames into {escaped(final)}: {error.strerror or error}") from None
    pngs = f" and {len(written)} PNG" if args.png else ""
    say(f"wrote {len(written)} SVG{pngs} files to {escaped(final)}")
    if cut:  # a slide cannot scroll: say where it leaves something out, and what shows it
        name, words = cut[0]
        # Every box grows with the screen's height; at the tallest, only a smaller run fits.
        more = (f"a taller --screen (up to {MAX_SIZE[1]} rows) shows more" if args.size[1] < MAX_SIZE[1]
                else f"--screen is at its tallest ({MAX_SIZE[1]} rows): fewer GPUs show more")
        say(f"note: {plural(len(cut), 'frame')} of {len(written)} cannot show all "
            f"{'it holds' if len(cut) == 1 else 'they hold'} ({name}: {', '.join(words)} "
            f"not shown); {more}")
    return 0
