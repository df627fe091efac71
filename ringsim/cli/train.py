"""ringsim train: logistic regression trained data-parallel, gradients synced through the engine."""

from __future__ import annotations

import argparse

from ..algorithms import ALGORITHMS, DEFAULT_ALGORITHM
from ..execute.backend import array_module
from ..core.checks import count_arg, echo
from ..core.width import say
from .common import add_backend_argument, add_option_arguments, gpus_arg, options_from_args

ORDER = 35
HELP = "train a small model data-parallel on G simulated GPUs, syncing gradients with an algorithm"


def _positive_float(text: str) -> float:
    from ..training.train import MAX_LR
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {echo(text)}") from None
    if not 0 < value <= MAX_LR:
        raise argparse.ArgumentTypeError(f"expected a number above 0 and at most {MAX_LR:,.0f}, "
                                         f"got {text!r}")
    return value


def register(sub) -> None:
    """Add the `train` subcommand to `sub`."""
    parser = sub.add_parser("train", help=HELP, description=HELP + ". Prints the loss per epoch, "
                            "how far the GPUs' replicas differ, how far they are from the same "
                            "model trained on one GPU with the whole batch, and what the syncs moved.")
    parser.add_argument("-g", "--gpus", type=gpus_arg, default=4, metavar="G",
                        help="number of simulated GPUs (default: 4)")
    parser.add_argument("-a", "--algorithm", default=DEFAULT_ALGORITHM, choices=list(ALGORITHMS),
                        help=f"all-reduce algorithm for the gradients (default: {DEFAULT_ALGORITHM})")
    parser.add_argument("-e", "--epochs", type=count_arg("the number of epochs", minimum=1, maximum=10_000), default=5,
                        metavar="E", help="passes over the data (default: 5)")
    parser.add_argument("--batch", type=count_arg("the batch size", minimum=1, maximum=10_000_000), default=256,
                        metavar="B", help="global batch, split across the GPUs (default: 256)")
    parser.add_argument("--samples", type=count_arg("the number of samples", minimum=1, maximum=10_000_000),
                        default=4096, metavar="S", help="size of the synthetic data set (default: 4096)")
    parser.add_argument("--features", type=count_arg("the number of features", minimum=1, maximum=10_000), default=8,
                        metavar="F", help="input features; the model has F+1 parameters (default: 8)")
    parser.add_argument("--lr", type=_positive_float, default=None,
                        help="learning rate (default: 0.5; 0.05 for Adam with --zero)")
    parser.add_argument("--seed", type=count_arg("the seed", minimum=0, maximum=2**63 - 1), default=0,
                        metavar="SEED", help="seed of the synthetic data (default: 0)")
    parser.add_argument("--no-sync", action="store_true",
                        help="skip the all-reduce: each GPU steps on its own shard and the replicas drift")
    parser.add_argument("--zero", type=count_arg("--zero", minimum=None), choices=[1, 2, 3], default=None, metavar="STAGE",
                        help="ZeRO stage 1, 2 or 3 with Adam: reduce-scatter the gradients, each GPU "
                             "updates its shard, all-gather the parameters; compared with plain "
                             "data parallelism (ring only)")
    add_option_arguments(parser)
    add_backend_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run `ringsim train` on the parsed `args`; returns the exit status."""
    if args.zero is not None:
        from ..training.zero_train import run_from_args
        return run_from_args(args, dict(options_from_args(args)))
    from ..training.train import report_lines, train
    lr = 0.5 if args.lr is None else args.lr
    result = train(args.gpus, args.algorithm, args.epochs, sync=not args.no_sync,
                   samples=args.samples, features=args.features, batch=args.batch, lr=lr,
                   seed=args.seed, xp=array_module(args.backend), options=dict(options_from_args(args)))
    say("\n".join(report_lines(result)))
    return 0
