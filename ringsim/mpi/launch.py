"""mpiexec as one job: its own process group, output relayed line by line, and nothing left behind.

mpiexec starts a proxy per host and the ranks under it, and MPICH's proxy gives itself and
every rank a session of its own (setsid), so neither a process group nor a session holds
them all: the job follows the parent links instead (every descendant of mpiexec, in
/proc) and ends them together: on a
stop signal (SIGTERM, SIGHUP; SIGINT arrives as KeyboardInterrupt), on a reader that
leaves or a full disk, and after a normal end. They get SIGTERM, then SIGKILL after a
grace period, and the job waits until none of them is left. Plain subprocess and /proc:
no mpi4py here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from typing import Callable, TextIO

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Stopped(Exception):
    """A stop signal reached the launcher; the job has been ended."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by signal {signum}")
        self.signum = signum


def group_members(group: int) -> list[int]:
    """Process ids whose process group is `group` (Linux /proc; empty elsewhere)."""
    return _members(2, group)


def descendants(root: int) -> list[tuple[int, str]]:
    """(pid, start time) of every process below `root` in the parent tree (Linux /proc; empty
    elsewhere). The start time tells a process from a later one that reuses its pid."""
    children: dict[int, list[tuple[int, str]]] = {}
    for pid, fields in _stats():
        children.setdefault(int(fields[1]), []).append((pid, fields[19]))
    found, frontier = [], [root]
    while frontier:
        below = [c for p in frontier for c in children.get(p, ())]
        found += below
        frontier = [pid for pid, _ in below]
    return found


def _stats():
    """(pid, fields after the command name) of every live process."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 19 and fields[0] != "Z":
            yield int(name), fields


def _members(field: int, value: int) -> list[int]:
    return [pid for pid, fields in _stats() if int(fields[field]) == value]


class Job:
    """The mpiexec process and everything it starts, ended together (a context manager)."""

    def __init__(self, command: list[str], env: dict, grace: float = 5.0) -> None:
        self.command, self.env, self.grace = command, env, grace
        self.process: subprocess.Popen | None = None
        self._previous: dict = {}
        self._errors: threading.Thread | None = None
        self._tree: set[tuple[int, str]] = set()  # every descendant seen: (pid, start time)
        self._ending = False  # ringsim is ending the job: what its launcher says of that is noise
        self.printed = False  # whether the job wrote any line (a silent failure needs naming)

    def __enter__(self) -> "Job":
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.signal(signum, self._on_signal)
        self.process = subprocess.Popen(self.command, env=self.env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                        process_group=0)
        return self

    def _on_signal(self, signum, _frame) -> None:
        raise Stopped(signum)

    def relay(self, keep: Callable[[str], bool], out: TextIO, err: TextIO) -> None:
        """Copy the job's stdout to `out` here and its stderr lines that `keep` passes to `err`
        (a thread), each as it comes; a write error ends the job and is raised here."""
        def errors() -> None:
            try:
                for raw in self.process.stderr:
                    line = raw.decode("utf-8", "replace")
                    # Once ringsim ends the job (a reader that left, a stop signal), MPICH's
                    # proxies may complain that their pipes closed; that is not the job's news.
                    if keep(line) and not self._ending:
                        self.printed = True
                        err.write(line)
                        err.flush()
            except (OSError, ValueError):
                pass  # stderr gone or the job closed: the exit status still tells
        self._errors = threading.Thread(target=errors, name="ringsim-mpiexec-stderr", daemon=True)
        self._errors.start()
        threading.Thread(target=self._follow, name="ringsim-mpiexec-tree", daemon=True).start()
        for raw in self.process.stdout:
            self.printed = True
            out.write(raw.decode("utf-8", "replace"))
            out.flush()

    def _follow(self) -> None:
        """Note mpiexec's descendants while it runs: once it exits they would be orphans."""
        while self.process.poll() is None:
            self._tree |= set(descendants(self.process.pid))
            time.sleep(0.5)

    def wait(self) -> int:
        """mpiexec's exit status, once its output is drained."""
        code = self.process.wait()
        if self._errors is not None:
            self._errors.join(timeout=self.grace)
        return code

    def stop(self) -> None:
        """End every process of the job: SIGTERM, then SIGKILL after the grace; wait for all."""
        self._ending = True
        group = self.process.pid
        self._tree |= set(descendants(group))  # before mpiexec exits and its children are orphaned
        self._signal_all(group, signal.SIGTERM)
        deadline = time.monotonic() + self.grace
        while time.monotonic() < deadline and self._alive(group):
            time.sleep(0.05)
        if self._alive(group):
            self._signal_all(group, signal.SIGKILL)
            deadline = time.monotonic() + self.grace
            while time.monotonic() < deadline and self._alive(group):
                time.sleep(0.05)
        try:
            self.process.wait(timeout=self.grace)
        except subprocess.TimeoutExpired:
            pass

    def _alive(self, group: int) -> bool:
        self.process.poll()  # reap mpiexec itself once it exits
        self._tree |= set(descendants(group))
        return self.process.returncode is None or bool(self._left())

    def _left(self) -> list[int]:
        """Processes of the job still running (its group, and every descendant seen)."""
        live = {(pid, fields[19]) for pid, fields in _stats()}
        return sorted({pid for pid, _ in self._tree & live} | set(group_members(self.process.pid)))

    def _signal_all(self, group: int, signum: int) -> None:
        self._tree |= set(descendants(group))
        for pid in [group] + self._left():
            try:
                if pid == group:
                    os.killpg(group, signum)
                else:
                    os.kill(pid, signum)
            except (ProcessLookupError, PermissionError):
                pass

    def __exit__(self, kind, value, _tb) -> bool:
        try:
            self._tree |= set(descendants(self.process.pid))
            if kind is not None or self._alive(self.process.pid):
                self.stop()
        finally:
            for signum, handler in self._previous.items():
                signal.signal(signum, handler)
            for stream in (self.process.stdout, self.process.stderr):
                try:
                    stream.close()
                except OSError:
                    pass
        return False
