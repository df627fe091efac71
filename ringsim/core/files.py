"""Files read and written: one reader for every file a user names (only regular files of a
stated size, each caller with its own cap and words), and every file is written whole or not
at all (a temporary file beside it, then one rename).

A rename within a folder is atomic on POSIX (rename(2)) and on Windows (os.replace), so two
runs writing one file at once leave one run's whole output, never a mix of both, and a run
stopped half-way leaves the old file as it was.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .errors import RingsimError, WriteError
from .textout import escaped

MAX_PATH = 4096       # PATH_MAX on Linux: a longer path cannot be opened anyway
MAX_NAME_BYTES = 255  # NAME_MAX on Linux, macOS and Windows: the longest file name a folder holds


def _shown(path: object) -> str:
    """A path for a message, its escapes spelled out (textout.escaped), cut to 60 characters."""
    text = escaped(path)
    return text if len(text) <= 60 else text[:28] + "…" + text[-28:]


# What a write meets when the machine, not the name given, is at fault.
_MACHINE_FAULTS = (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG)


def _unwritten(what: str, text: str, error: OSError) -> RingsimError:
    """The one-line error for a file that could not be written: WriteError where the disk or
    device failed (status 1), RingsimError where the name was the problem (status 2)."""
    kind = WriteError if error.errno in _MACHINE_FAULTS else RingsimError
    return kind(f"cannot write {what} {_shown(text)}: {_reason(error)}")


def _reason(error: OSError) -> str:
    if error.errno == errno.ENAMETOOLONG:
        return "the name is too long"
    return error.strerror or str(error)


def check_path_text(path: object, what: str) -> str:
    """`path` (text or a path object) as text, refused when it names no file: of another type,
    empty, holding NUL or longer than MAX_PATH."""
    if not isinstance(path, (str, os.PathLike)):
        raise RingsimError(f"{what} must be a file name, got {type(path).__name__}")
    text = os.fspath(path)
    if not isinstance(text, str) or not text.strip():
        raise RingsimError(f"{what} needs a file name (an empty one names no file)")
    if "\0" in text:
        raise RingsimError(f"{what}: a file name cannot hold a NUL character")
    if len(text) > MAX_PATH:
        raise RingsimError(f"{what}: the path is {len(text):,} characters long; at most {MAX_PATH:,}")
    return text


@dataclass(frozen=True)
class Wording:
    """How a reader words each refusal; fields are str.format templates over what, name, size,
    limit (bytes), mib (the size in MiB), limit_mib, limit_kib and reason."""

    unreadable: str = "cannot read {what} {name}: {reason}"
    missing: str = "cannot read {what} {name}: {reason}"
    folder: str = ("{what} {name} is not a regular file (a folder, FIFO or device cannot be "
                   "read as one)")
    special: str = ("{what} {name} is not a regular file (a folder, FIFO or device cannot be "
                    "read as one)")
    too_big: str = "{what} {name} is {size:,} bytes; at most {limit:,} are read"
    grew: str = "{what} {name} is more than {limit:,} bytes"
    not_utf8: str = "{what} {name} is not UTF-8 text"
    no_stdin: str = "no standard input to read the {what} from"


PLAIN = Wording()


def read_bytes(path: object, what: str, limit: int, *, stdin: bool = False,
               wording: Wording = PLAIN) -> bytes:
    """At most `limit` bytes of a regular file (or of standard input for '-' when `stdin`),
    or one RingsimError worded by `wording`.

    FIFOs, devices (a link to /dev/zero) and folders are refused before a byte is read; the
    file is opened without blocking, so a FIFO with no writer cannot hang the reader, and its
    size is checked before reading, so a huge file costs nothing."""
    def refuse(template: str, **values) -> RingsimError:
        return _refusal(template, what, name, limit, **values)

    if stdin and path == "-":
        name = "standard input"
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            raise refuse(wording.no_stdin)
        data = stream.read(limit + 1)
    else:
        text = check_path_text(path, what)
        name = _shown(text)
        try:
            fd = os.open(text, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        except OSError as error:
            template = wording.missing if error.errno == errno.ENOENT else wording.unreadable
            raise refuse(template, reason=_reason(error)) from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise refuse(wording.folder if stat.S_ISDIR(info.st_mode) else wording.special)
        with os.fdopen(fd, "rb") as file:
            if info.st_size > limit:
                raise refuse(wording.too_big, size=info.st_size)
            try:
                data = file.read(limit + 1)
            except OSError as error:
                raise refuse(wording.unreadable, reason=_reason(error)) from None
    if len(data) > limit:  # standard input, or a file that grew while being read
        raise refuse(wording.grew)
    return data


def read_text(path: object, what: str, limit: int, *, stdin: bool = False,
              wording: Wording = PLAIN, lenient: bool = False) -> str:
    """The UTF-8 text of a file read by read_bytes; `lenient` replaces bytes that are not
    UTF-8 (a pasted log) instead of refusing the file. A byte-order mark says the encoding,
    as Windows tools write one: UTF-8's is dropped, and text that starts with UTF-16's
    (PowerShell's `>`) or UTF-32's is read as such."""
    data = read_bytes(path, what, limit, stdin=stdin, wording=wording)
    # UTF-32's little-endian mark starts with UTF-16's, so it is looked for first.
    encoding = ("utf-32" if data[:4] in (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE) else
                "utf-16" if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) else "utf-8-sig")
    try:
        return data.decode(encoding, errors="replace" if lenient else "strict")
    except UnicodeDecodeError as error:
        name = "standard input" if stdin and path == "-" else _shown(path)
        # a file whose mark said UTF-16 or UTF-32 is named for that, not for UTF-8
        marked = {"utf-16": "UTF-16 text (as its byte-order mark says)",
                  "utf-32": "UTF-32 text (as its byte-order mark says)"}.get(encoding)
        template = wording.not_utf8.replace("UTF-8 text", marked) if marked else wording.not_utf8
        raise _refusal(template, what, name, limit, reason=error) from None


def _refusal(template: str, what: str, name: str, limit: int, size: int = 0,
             reason: object = "") -> RingsimError:
    """A Wording template filled in: sizes in bytes, MiB and KiB, so each reader words its own."""
    return RingsimError(template.format(what=what, name=name, size=size, limit=limit,
                                        mib=size / (1024 * 1024), limit_mib=limit // (1024 * 1024),
                                        limit_kib=limit // 1024, reason=reason))


def read_lines(path: object, what: str, limit: int, max_line: int, *, stdin: bool = False,
               wording: Wording = PLAIN, lenient: bool = False) -> tuple[list[str], int]:
    """The lines of read_text, each cut at `max_line` characters, and how many were cut."""
    lines, cut = [], 0
    for line in read_text(path, what, limit, stdin=stdin, wording=wording, lenient=lenient).splitlines():
        if len(line) > max_line:
            line, cut = line[:max_line], cut + 1
        lines.append(line)
    return lines, cut


def same_file(a: object, b: object) -> bool:
    """Whether two names reach one file (links and hard links too, where both exist): an
    output must never be written over a file the same run reads."""
    a, b = Path(a), Path(b)
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except (OSError, ValueError):  # ValueError: a name holding NUL, which names no file
        return False


def check_not_read(output: object, what: str, command: str, reads: dict[str, object]) -> None:
    """Refuse an output that reaches a file the same run reads (`reads`: what each is, e.g.
    'the --topology file', to the name given; None, '-' and presets are skipped): the
    write would replace the file read, the user's copy lost."""
    for about, given in reads.items():
        if isinstance(given, (str, os.PathLike)) and given != "-" and same_file(output, given):
            raise RingsimError(f"{what} {_shown(output)} is {about}, which {command} reads: "
                               "give another file name")


def check_output(path: object, what: str) -> str:
    """Refuse, before any work, a file name that cannot be written: empty, too long, a folder,
    in a folder that does not exist, a FIFO no program reads, a block device or a socket.
    Returns the name as text."""
    text = check_path_text(path, what)
    folder, name = os.path.split(text)
    if not name:
        raise RingsimError(f"{what} {_shown(text)} is a folder; give a file name")
    if len(name.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
        raise RingsimError(f"{what}: the file name is {len(name):,} characters long; a folder "
                           f"holds names of at most {MAX_NAME_BYTES} bytes")
    if os.path.isdir(text):
        raise RingsimError(f"{what} {_shown(text)} is a folder; give a file name")
    if folder and not os.path.isdir(folder):
        raise RingsimError(f"{what}: the folder {_shown(folder)} does not exist")
    try:
        info = os.stat(text)  # through links: what the name ends at
    except FileNotFoundError:
        return text  # a new file; the write says why if it cannot be made
    except OSError as error:  # links that loop: the rename would replace the link itself
        raise _unwritten(what, text, error) from None
    if not stat.S_ISREG(info.st_mode):
        _stream(text, info, what)
    return text


# A FIFO or device opened by check_output, by (device, inode), until atomic_output writes it:
# a FIFO's reader sees the end of the stream when its last writer closes, so the open that
# found the reader is the one that writes.
_STREAMS: dict[tuple[int, int], int] = {}


def _stream(path: str, info: os.stat_result, what: str) -> int:
    """The descriptor to write the FIFO or character device `path` through, or a refusal."""
    key = (info.st_dev, info.st_ino)
    if key in _STREAMS:
        return _STREAMS[key]
    mode, name = info.st_mode, _shown(path)
    if stat.S_ISBLK(mode):
        raise RingsimError(f"{what} {name} is not a regular file (a disk or other block device "
                           "is never written over); give a file name")
    if not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        raise RingsimError(f"{what} {name} is not a regular file (a socket cannot be written as "
                           "one); give a file name")
    # Without O_NONBLOCK, opening a FIFO that no program reads waits forever; with it, the
    # open fails at once (ENXIO). The writes themselves block as usual.
    nonblock = getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, os.O_WRONLY | nonblock | getattr(os, "O_NOCTTY", 0))
    except OSError as error:
        if error.errno == errno.ENXIO and stat.S_ISFIFO(mode):
            raise RingsimError(f"{what} {name} is not a regular file (a FIFO or pipe that no "
                               "program reads would block forever); start its reader first or "
                               "give a file name") from None
        raise _unwritten(what, path, error) from None
    if nonblock:
        os.set_blocking(fd, True)
    _STREAMS[key] = fd
    return fd


@contextmanager
def atomic_output(path: object, what: str, *, binary: bool = False):
    """A file object to write `path` through: the whole file appears at once when the block
    ends, and nothing is left behind (no temporary file, the old file untouched) when it fails.

    A FIFO with a reader or a character device (/dev/stdout, /dev/null) is written directly:
    it cannot be replaced by a rename, and what reads it sees a stream anyway. check_output
    refuses a FIFO that no program reads, a block device and a socket."""
    text = check_output(path, what)
    try:
        info = os.stat(text)  # through links: what the name ends at
    except OSError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        fd = _stream(text, info, what)
        del _STREAMS[(info.st_dev, info.st_ino)]
        try:
            with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as out:
                yield out
        except OSError as error:
            raise _unwritten(what, text, error) from None
        return
    real = os.path.realpath(text)  # a link to a file stays a link: the file it names is replaced
    folder = os.path.dirname(real) or "."
    try:
        fd, temporary = tempfile.mkstemp(prefix=".ringsim-", suffix=".part", dir=folder)
    except OSError as error:
        raise _unwritten(what, text, error) from None
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as out:
            # mkstemp makes the file private (0600); give it the mode a plain open() would.
            os.chmod(temporary, stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask())
            yield out
        os.replace(temporary, real)
    except OSError as error:
        _remove(temporary)
        raise _unwritten(what, text, error) from None
    except BaseException:
        _remove(temporary)
        raise


def write_text(path: object, what: str, content: str) -> None:
    """Write `content` to `path` whole (atomic_output)."""
    with atomic_output(path, what) as out:
        out.write(content)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _umask() -> int:
    mask = os.umask(0o022)  # the only way to read it is to set it; set it back at once
    os.umask(mask)
    return mask


def check_folder(folder: object) -> Path:
    """The folder as a Path, refused in one line where it is a file or lies inside one."""
    folder = Path(check_path_text(folder, "the folder"))
    for part in [folder, *folder.parents]:
        if part.exists() or part.is_symlink():
            if not part.is_dir():
                what = "is not a folder" if part == folder else f"is inside {_shown(part)}, which is a file"
                raise RingsimError(f"{_shown(folder)} {what}")
            break
    return folder


def make_folder(folder: object) -> Path:
    """Create the folder (and its parents), or say in one line why it cannot be."""
    folder = check_folder(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RingsimError(f"cannot create the folder {_shown(folder)}: {_reason(error)}") from None
    return folder
