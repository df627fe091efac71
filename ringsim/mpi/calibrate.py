"""`ringsim mpi --calibrate`: measure α and β by ping-pong, then price every algorithm with them.

A message of b bytes is modelled as α + β·b (Hockney's model; Thakur, Rabenseifner & Gropp,
"Optimization of Collective Communication Operations in MPICH", IJHPCA 2005, price MPICH's
all-reduce algorithms the same way). Ranks 0 and 1 bounce messages of growing size; half a
round trip is one message's time; a robust line through (b, time) gives α and β (see fit),
with their standard errors from the residuals, and --write-topology keeps them as a topology
file that the cost model reads.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..core.textout import escaped
from ..cost import model as cost
from ..algorithms import ALGORITHMS, make_plan
from ..cost.model import CostModel
from ..core.files import write_text
from ..core.fit import theil_sen
from ..core.plan import Plan
from .bench import check_sum, timed
from .collective import run, session
from .data import rank_data
from .options import elements_of
from ..core.units import format_seconds
from ..core.width import say
from .story import bytes_text, library_name

SIZES = [2 ** k for k in range(3, 23, 2)]  # 8 B … 2 MiB


def price(plan: Plan, elements: int, itemsize: int, alpha: float, beta: float,
          gamma: float = 0.0) -> float:
    """Model seconds of a plan on the measured machine: the engine's α-β-γ model (ringsim.cost.model)
    on one flat level with α, 1/β and 1/γ as measured."""
    model = CostModel.flat(alpha=alpha, bandwidth=1 / beta if beta > 0 else math.inf,
                           reduce_bandwidth=1 / gamma if gamma > 0 else math.inf, itemsize=itemsize)
    return cost.price(plan, elements, model).seconds


def add_cost(elements: int, dtype) -> float:
    """γ: seconds per byte of np.add(a, b, out=a) on this rank, best of 5."""
    a = np.ones(max(elements, 1), dtype=dtype)
    b = np.ones_like(a)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        np.add(a, b, out=a)
        best = min(best, time.perf_counter() - start)
    return best / a.nbytes


def fit(sizes: np.ndarray, seconds: np.ndarray) -> dict:
    """α, β ≥ 0 with standard errors and R² for seconds ≈ α + β·bytes, robust to slow outliers.

    β is the Theil–Sen slope (ringsim.core.fit): a few ping-pongs slowed by a busy machine
    move a median little, where they can tip a least-squares line to a negative slope; α is
    the median of what remains; both at least 0. The standard errors come from the
    residuals, as for a least-squares line through the same points.
    """
    b, t = sizes.astype(float), seconds.astype(float)
    alpha, beta = theil_sen(b, t)
    residual = t - (alpha + beta * b)
    design = np.column_stack([np.ones_like(b), b])
    dof = max(len(b) - 2, 1)
    covariance = (residual @ residual / dof) * np.linalg.pinv(design.T @ design)
    spread = ((t - t.mean()) ** 2).sum()
    return {"alpha": alpha, "beta": beta,
            "alpha_error": float(np.sqrt(max(covariance[0, 0], 0.0))),
            "beta_error": float(np.sqrt(max(covariance[1, 1], 0.0))),
            "r2": float(1 - (residual @ residual) / spread) if spread else 1.0}


def topology_text(record: dict, name: str) -> str:
    """A one-level topology file (the format of ringsim/cost/topologies/flat.toml) with the fit."""
    bandwidth = "inf" if record["beta"] <= 0 else f"{1 / record['beta']:.6e}B/s"
    reduce = "inf" if record["gamma"] <= 0 else f"{1 / record['gamma']:.6e}B/s"
    pong = record["ping_pong"]
    points = ", ".join(f"{b} B: {s * 1e6:.3f} us" for b, s in zip(pong["bytes"], pong["seconds"]))
    return (f"# Written by `ringsim mpi --calibrate --write-topology`: this machine, measured.\n"
            f"name = {json.dumps(name)}\n"
            f"title = {json.dumps('Calibrated by MPI ping-pong (' + record['mpi_library'] + ')')}\n"
            f"reduce_bandwidth = \"{reduce}\"\n\n"
            "sources = \"\"\"\n"
            "alpha and bandwidth (1/beta) are fitted to half the best round trip between ranks 0 and 1\n"
            "(Hockney's model t = alpha + beta*b; beta the Theil-Sen slope, both at least 0);\n"
            "reduce_bandwidth is np.add on rank 0 (1/gamma).\n"
            f"alpha = {record['alpha']:.6e} s +/- {record['alpha_error']:.2e}, beta = "
            f"{record['beta']:.6e} s/B +/- {record['beta_error']:.2e}, R2 = {record['r2']:.4f}\n"
            "\"\"\"\n"
            f"measured = \"\"\"\nping-pong: {points}\n\"\"\"\n\n"
            "[inside]\n"
            f"name = {json.dumps('MPI (' + record['mpi_library'] + ')')}\n"
            f"alpha = \"{record['alpha']:.6e}s\"\n"
            f"bandwidth = \"{bandwidth}\"\n")


def write_topology(record: dict, path: str) -> None:
    """Write the fit as a topology file, atomically (a reader never sees half a file)."""
    target = Path(path)
    text = topology_text(record, target.stem)
    from ..cost.topology import parse
    parse(text, target.stem)  # what is written must read back
    write_text(path, "topology file", text)


def ping_pong(watch, comm, MPI) -> tuple[np.ndarray, np.ndarray]:
    """Half the best round trip between ranks 0 and 1 for every size (other ranks wait)."""
    rank = comm.Get_rank()
    times = []
    buf = np.zeros(max(SIZES), np.uint8)
    for size in SIZES:
        best = float("inf")
        for _ in range(5 if size >= 1 << 20 else 20):
            if rank > 1:
                break
            piece = [buf[:size], MPI.BYTE]
            start = time.perf_counter()
            if rank == 0:
                watch.wait([comm.Isend(piece, dest=1, tag=7)], [1], -1)
                watch.wait([comm.Irecv(piece, source=1, tag=7)], [1], -1)
            else:
                watch.wait([comm.Irecv(piece, source=0, tag=7)], [0], -1)
                watch.wait([comm.Isend(piece, dest=0, tag=7)], [0], -1)
            best = min(best, (time.perf_counter() - start) / 2)
        times.append(best)
    watch.wait([comm.Ibarrier()], [-1], -1)
    return np.array(SIZES), np.array(times)


def calibrate(args: argparse.Namespace, comm: Any, MPI: Any) -> dict:
    """Fit α and β, then set each algorithm's modelled time beside its measured time."""
    rank, size = comm.Get_rank(), comm.Get_size()
    chan, watch = session(MPI, comm, args.timeout)
    sizes, seconds = ping_pong(watch, chan.data, MPI)
    x = rank_data(args.seed, rank, elements_of(args), args.dtype)
    mine = fit(sizes, seconds) if rank == 0 else {}
    if rank == 0:
        mine["gamma"] = add_cost(x.size // size, x.dtype)
    values = np.array(list(mine.values()) if rank == 0 else np.zeros(6))
    watch.wait([chan.data.Ibcast(values, root=0)], [-1], -1)
    model = dict(zip(("alpha", "beta", "alpha_error", "beta_error", "r2", "gamma"), values.tolist()))
    out = np.empty_like(x)
    rows = []
    for name in ALGORITHMS:
        plan = make_plan(name, size)
        if plan.switches:
            continue  # rank 0 plays the switch on its own link, which no switch model prices
        predicted = price(plan, x.size, x.itemsize, model["alpha"], model["beta"], model["gamma"])
        run(x, name, comm, out=out, timeout=args.timeout)  # warm-up
        measured = min(timed(watch, chan.data, MPI,
                             lambda: run(x, name, comm, out=out, timeout=args.timeout)) for _ in range(3))
        check_sum(watch, chan.data, MPI, x, out, f"ringsim's {name}")
        rows.append({"algorithm": name, "predicted_seconds": predicted, "measured_seconds": measured})
    record = {"type": "calibration", **model, "ranks": size, "elements": int(x.size),
              "dtype": args.dtype, "mpi_library": library_name(MPI), "algorithms": rows,
              "ping_pong": {"bytes": sizes.tolist(), "seconds": seconds.tolist()}}
    if rank == 0:
        target = getattr(args, "write_topology", None)
        if target:
            write_topology(record, target)
            record["topology_file"] = target
        if args.json:
            print(json.dumps(record))
        else:
            say(_text(record, x.nbytes))
    return record


def _text(r: dict, nbytes: int) -> str:
    # The column as wide as the longest name, so the times stay under their headings.
    width = max([len("algorithm")] + [len(row["algorithm"]) for row in r["algorithms"]])
    lines = [f"Ping-pong between ranks 0 and 1 ({r['mpi_library']}), one message = α + β·bytes:",
             f"  α = {r['alpha'] * 1e6:,.2f} ± {r['alpha_error'] * 1e6:,.2f} µs   "
             f"β = {r['beta'] * 1e9:,.4f} ± {r['beta_error'] * 1e9:,.4f} ns/byte "
             f"({1 / r['beta'] / 1e9 if r['beta'] > 0 else float('inf'):,.2f} GB/s)   R² = {r['r2']:.4f}",
             f"  γ = {r['gamma'] * 1e9:,.4f} ns per byte added (np.add on rank 0)",
             f"\n{r['ranks']} ranks, {r['elements']:,} {r['dtype']} per rank ({bytes_text(nbytes)}): "
             "the α–β model against the clock (best of 3)",
             f"  {'algorithm':<{width}} {'predicted':>12} {'measured':>12} {'measured/predicted':>19}"]
    for row in r["algorithms"]:
        ratio = row["measured_seconds"] / row["predicted_seconds"] if row["predicted_seconds"] else float("nan")
        lines.append(f"  {row['algorithm']:<{width}} {format_seconds(row['predicted_seconds']):>12} "
                     f"{format_seconds(row['measured_seconds']):>12} {ratio:>19.2f}")
    lines.append("  (the model does not know when ranks share cores: then the clock runs slower)")
    if r.get("topology_file"):
        shown = escaped(r["topology_file"])  # a name the user gave: nothing reaches the terminal raw
        lines.append(f"\nWrote the fit as topology {shown}: give --topology "
                     f"{shown} to ringsim compare, predict or diagnose")
    return "\n".join(lines)
