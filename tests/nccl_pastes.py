"""nccl-tests output as nccl-tests prints it, made from published times, for diagnose."""

from __future__ import annotations

from pathlib import Path

from ringsim.studies.nccltests import DTYPES, bus_factor

HEADER = ("#       size         count      type   redop    root     time   algbw   busbw #wrong"
          "     time   algbw   busbw #wrong")
SHARED = ("all-gather", "reduce-scatter")  # tests whose count column is each rank's share


def all_reduce_perf(path: Path, times: dict[int, float], gpu: str, hosts: list[str],
                    gpus_per_process: int = 1) -> Path:
    """Write to `path` a float all-reduce of these times (µs by bytes), one rank per GPU of
    each host in `hosts` (a host named once per GPU it has), `gpus_per_process` GPUs to each
    process (the header's nGpus); the same numbers in and out of place."""
    return perf_output(path, times, len(hosts), gpu=gpu, hosts=hosts,
                       gpus_per_process=gpus_per_process)


def perf_output(path: Path, times: dict[int, float], ranks: int, collective: str = "all-reduce",
                dtype: str = "float", gpu: str = "", hosts: list[str] | None = None,
                gpus_per_process: int = 1) -> Path:
    """Write to `path` the output of `collective`'s nccl-tests binary on `ranks` ranks, of these
    times (µs by bytes) in `dtype`; the header's rank lines where `hosts` names each rank's
    host (else none: give diagnose --gpus); the same numbers in and out of place."""
    lines = [f"# nThread 1 nGpus {gpus_per_process} minBytes {min(times)} maxBytes {max(times)} "
             "step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
             "#", "# Using devices"]
    lines += [f"#  Rank {r:2d} Group  0 Pid {4000 + r // gpus_per_process:6d} on {host:>10} "
              f"device  {hosts[:r].count(host)} [0x{r:02x}] {gpu}" for r, host in enumerate(hosts or [])]
    lines += ["#", HEADER]
    factor = float(bus_factor(collective, ranks))
    share = ranks if collective in SHARED else 1
    redop = "none" if collective == "all-gather" else "sum"
    for n, t in sorted(times.items()):
        alg = n / (t * 1e3)
        bus = alg * factor
        cells = (n, n // DTYPES[dtype] // share, dtype, redop, -1, f"{t:.2f}", f"{alg:.2f}",
                 f"{bus:.2f}", 0, f"{t:.2f}", f"{alg:.2f}", f"{bus:.2f}", 0)
        lines.append(" ".join(f"{c:>9}" for c in cells))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
