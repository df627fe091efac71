"""The algorithm options of the commands that price time (compare, timeline, overlap, zero),
and NCCL's layout of them as flags."""

from __future__ import annotations

import argparse

from .common import options_from_args


def given_options(args: argparse.Namespace) -> dict:
    """The algorithm options given, as users write them; --nodes is the topology's, not one."""
    return {k: v for k, v in options_from_args(args) if k != "nodes"}


def flags(options: dict) -> str:
    """Options as the command line gives them: '--ring-order rails:8'."""
    return " ".join(f"--{k.replace('_', '-')} {v}" for k, v in options.items())
