"""The training step around the all-reduce: a small data-parallel model, ZeRO, and overlap with the backward pass."""
