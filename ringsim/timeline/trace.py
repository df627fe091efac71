"""Chrome / Perfetto trace JSON of a timeline: a process per GPU, tracks send, receive, reduce.
A plan's switch is a process of its own, with a track per GPU and direction (it has a port
per GPU, and serves them all at once).

The Trace Event Format (Google, "Trace Event Format" document, catapult
docs/trace-event-format.md): a JSON object whose `traceEvents` list holds complete events
(`ph` "X" with `ts` and `dur` in microseconds, `pid`, `tid`, `name`, `cat`, `args`) and
metadata events (`ph` "M", `process_name` / `thread_name` with `args.name`). Perfetto
(ui.perfetto.dev) and chrome://tracing open it.
"""

from __future__ import annotations

import json
from typing import IO, Iterable, Iterator

import numpy as np

from ..core.plan import OPS, REDUCE
from .model import Timeline

TRACKS = {"send": 1, "receive": 2, "reduce": 3}
MICRO = 1e6


def _track(timeline: Timeline, participant: int, kind: str, peer: int) -> int:
    """The thread id of a send, receive or reduce: a GPU's track, or a switch's for that peer."""
    if participant < timeline.plan.gpus:
        return TRACKS[kind]
    return len(TRACKS) * peer + TRACKS[kind]


def _track_name(timeline: Timeline, kind: str, peer: int) -> str:
    """'receive from GPU3', 'send to GPU3', 'reduce from GPU3': a switch's track."""
    return f"{kind} {'to' if kind == 'send' else 'from'} {timeline.name(peer)}"


def _segments(first: int, last: int) -> str:
    return f"seg {first + 1}" if first == last else f"seg {first + 1}–{last + 1}"


def events(timeline: Timeline) -> Iterator[dict]:
    """Every trace event: metadata first, then per transfer a send, a receive and a reduce."""
    gpus = timeline.plan.gpus
    for g in range(timeline.plan.participants):
        yield {"ph": "M", "name": "process_name", "pid": g + 1, "tid": 0,
               "args": {"name": timeline.name(g)}}
        yield {"ph": "M", "name": "process_sort_index", "pid": g + 1, "tid": 0,
               "args": {"sort_index": g}}
        if g < gpus:
            tracks = list(TRACKS.items())
        else:  # the switch's tracks its transfers use, in the order of its peers
            used = [(kind, p) for kind, peers in (("send", timeline.dst[timeline.src == g]),
                                                  ("receive", timeline.src[timeline.dst == g]),
                                                  ("reduce", timeline.src[timeline.dst == g]))
                    for p in np.unique(peers).tolist()]
            tracks = sorted(((_track_name(timeline, kind, p), _track(timeline, g, kind, p))
                             for kind, p in used), key=lambda track: track[1])
        for name, tid in tracks:
            yield {"ph": "M", "name": "thread_name", "pid": g + 1, "tid": tid,
                   "args": {"name": name}}
    nbytes = timeline.bytes()
    for i in range(len(timeline)):
        s, d = int(timeline.src[i]), int(timeline.dst[i])
        first, last = int(timeline.first[i]), int(timeline.last[i])
        step = int(timeline.step[i])
        args = {"step": step + 1, "phase": timeline.plan.steps[step].phase,
                "segment": _segments(first, last), "bytes": int(nbytes[i]),
                "op": OPS[int(timeline.ops[i])], "src": timeline.name(s), "dst": timeline.name(d)}
        start, sent, end = float(timeline.start[i]), float(timeline.sent[i]), float(timeline.end[i])
        what = _segments(first, last)
        yield {"ph": "X", "cat": "send", "name": f"{what} → {timeline.name(d)}", "pid": s + 1,
               "tid": _track(timeline, s, "send", d), "ts": start * MICRO,
               "dur": (sent - start) * MICRO, "args": args}
        yield {"ph": "X", "cat": "receive", "name": f"{what} ← {timeline.name(s)}", "pid": d + 1,
               "tid": _track(timeline, d, "receive", s), "ts": start * MICRO,
               "dur": (sent - start) * MICRO, "args": args}
        if int(timeline.ops[i]) == REDUCE and end > sent:
            yield {"ph": "X", "cat": "reduce", "name": f"{what} += {timeline.name(s)}", "pid": d + 1,
                   "tid": _track(timeline, d, "reduce", s), "ts": sent * MICRO,
                   "dur": (end - sent) * MICRO, "args": args}


def write(timeline: Timeline, out: IO[str]) -> int:
    """Write the timeline's trace JSON to a text stream, an event at a time; the number of events."""
    return write_events(events(timeline), out)


def write_events(trace: Iterable[dict], out: IO[str]) -> int:
    """Write trace events as a Trace Event Format JSON object; the number of events."""
    out.write('{"displayTimeUnit": "ns", "traceEvents": [\n')
    count = 0
    for event in trace:
        out.write((",\n" if count else "") + json.dumps(event, ensure_ascii=False))
        count += 1
    out.write("\n]}\n")
    return count
