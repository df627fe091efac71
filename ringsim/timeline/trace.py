"""Chrome / Perfetto trace JSON of a timeline: a process per GPU, tracks send, receive, reduce.

The Trace Event Format (Google, "Trace Event Format" document, catapult
docs/trace-event-format.md): a JSON object whose `traceEvents` list holds complete events
(`ph` "X" with `ts` and `dur` in microseconds, `pid`, `tid`, `name`, `cat`, `args`) and
metadata events (`ph` "M", `process_name` / `thread_name` with `args.name`). Perfetto
(ui.perfetto.dev) and chrome://tracing open it.
"""

from __future__ import annotations

import json
from typing import IO, Iterable, Iterator

from ..core.naming import gpu_name
from ..core.plan import OPS, REDUCE
from .model import Timeline

TRACKS = {"send": 1, "receive": 2, "reduce": 3}
MICRO = 1e6


def _segments(first: int, last: int) -> str:
    return f"seg {first + 1}" if first == last else f"seg {first + 1}–{last + 1}"


def events(timeline: Timeline) -> Iterator[dict]:
    """Every trace event: metadata first, then per transfer a send, a receive and a reduce."""
    for g in range(timeline.plan.gpus):
        yield {"ph": "M", "name": "process_name", "pid": g + 1, "tid": 0,
               "args": {"name": gpu_name(g)}}
        yield {"ph": "M", "name": "process_sort_index", "pid": g + 1, "tid": 0,
               "args": {"sort_index": g}}
        for track, tid in TRACKS.items():
            yield {"ph": "M", "name": "thread_name", "pid": g + 1, "tid": tid,
                   "args": {"name": track}}
    nbytes = timeline.bytes()
    for i in range(len(timeline)):
        s, d = int(timeline.src[i]), int(timeline.dst[i])
        first, last = int(timeline.first[i]), int(timeline.last[i])
        step = int(timeline.step[i])
        args = {"step": step + 1, "phase": timeline.plan.steps[step].phase,
                "segment": _segments(first, last), "bytes": int(nbytes[i]),
                "op": OPS[int(timeline.ops[i])], "src": gpu_name(s), "dst": gpu_name(d)}
        start, sent, end = float(timeline.start[i]), float(timeline.sent[i]), float(timeline.end[i])
        what = _segments(first, last)
        yield {"ph": "X", "cat": "send", "name": f"{what} → {gpu_name(d)}", "pid": s + 1,
               "tid": TRACKS["send"], "ts": start * MICRO, "dur": (sent - start) * MICRO, "args": args}
        yield {"ph": "X", "cat": "receive", "name": f"{what} ← {gpu_name(s)}", "pid": d + 1,
               "tid": TRACKS["receive"], "ts": start * MICRO, "dur": (sent - start) * MICRO,
               "args": args}
        if int(timeline.ops[i]) == REDUCE and end > sent:
            yield {"ph": "X", "cat": "reduce", "name": f"{what} += {gpu_name(s)}", "pid": d + 1,
                   "tid": TRACKS["reduce"], "ts": sent * MICRO, "dur": (end - sent) * MICRO,
                   "args": args}


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
