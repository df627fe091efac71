"""Timelines: a plan as events on a small engine, with faults (slow GPUs, slow links, late GPUs)."""

from .engine import Engine
from .faults import Fault, delay, slow_gpu, slow_link
from .model import Timeline, simulate

__all__ = ["Engine", "Fault", "Timeline", "delay", "simulate", "slow_gpu", "slow_link"]
