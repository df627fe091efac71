"""What the training-step pane (key o) shows: ringsim.training.overlap's DDP step for a preset model
(ringsim.training.models) at the TUI's G, topology and algorithm; the TUI computes nothing itself."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..cost.model import CostModel
from ..training.models import MODELS, Model, model
from ..training.overlap import Overlap, simulate
from .clock import DTYPE

MODEL_NAMES = tuple(MODELS)  # key O cycles them; llama-7b first


@dataclass(frozen=True)
class TrainingStep:
    """One DDP training step: the model, the all-reduce algorithm, and the engine's Overlap."""

    model: Model
    algorithm: str
    topology: str
    gpus: int
    step: Overlap


@lru_cache(maxsize=32)
def training_step(name: str, gpus: int, topology: str, algorithm: str) -> TrainingStep:
    """`ringsim overlap --model NAME --gpus G --topology T --algorithm A` (defaults otherwise)."""
    net = model(name)
    return TrainingStep(net, algorithm, topology, gpus,
                        simulate(net, gpus, CostModel.of(topology, DTYPE), algorithm=algorithm))
