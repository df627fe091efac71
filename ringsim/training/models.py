"""Model presets for `ringsim overlap`: layers in forward order, their parameter tensors and FLOPs.

A layer's forward pass costs `flops` per sample; its backward pass twice that (Kaplan et al.,
"Scaling Laws for Neural Language Models", 2020, §2.1: forward ≈ 2N, backward ≈ 4N FLOPs
per token for N parameters, attention's context term left out).

- `llama-7b`: Llama 2 7B (Touvron et al., "Llama 2", 2023; its Hugging Face config: hidden
  4096, intermediate 11008, 32 layers, vocabulary 32000, untied output head): 6,738,415,616
  parameters. A sample is one 4,096-token sequence; FLOPs per token 2 × the layer's weights.
- `resnet-50`: ResNet-50 v1.5 as torchvision builds it (He et al., "Deep Residual Learning",
  CVPR 2016, Table 1; the stride-2 3×3 convolutions of torchvision): 25,557,032 parameters,
  about 4.1 G multiply-adds per 224×224 image; FLOPs = 2 × multiply-adds, computed below
  from every convolution's weights and output size.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.checks import echo
from ..core.errors import RingsimError


@dataclass(frozen=True)
class Layer:
    """A layer: its name, its parameter tensors' sizes (elements), its forward FLOPs per sample."""

    name: str
    tensors: tuple[int, ...]
    flops: float

    @property
    def params(self) -> int:
        """Elements in all its tensors."""
        return sum(self.tensors)


@dataclass(frozen=True)
class Model:
    """A named model: layers in forward order, and what one sample is."""

    name: str
    title: str
    layers: tuple[Layer, ...]
    sample: str
    batch: int  # samples per GPU by default

    @property
    def params(self) -> int:
        """All parameters."""
        return sum(layer.params for layer in self.layers)


def llama_7b() -> Model:
    """Llama 2 7B: embedding, 32 decoder layers (attention, MLP, two RMSNorms), norm and head."""
    hidden, inter, vocab, layers, tokens = 4096, 11008, 32000, 32, 4096
    out = [Layer("embedding", (vocab * hidden,), 0.0)]  # a lookup: no multiply-adds
    for i in range(1, layers + 1):
        attn = (hidden, hidden * hidden, hidden * hidden, hidden * hidden, hidden * hidden)
        mlp = (hidden, hidden * inter, hidden * inter, inter * hidden)
        out.append(Layer(f"layer {i} attention", attn, 2.0 * tokens * sum(attn)))
        out.append(Layer(f"layer {i} MLP", mlp, 2.0 * tokens * sum(mlp)))
    out.append(Layer("norm and head", (hidden, vocab * hidden), 2.0 * tokens * vocab * hidden))
    return Model("llama-7b", "Llama 2 7B", tuple(out), "sequence of 4,096 tokens", 1)


def resnet_50() -> Model:
    """ResNet-50 v1.5: the stem, 16 bottleneck blocks in 4 stages, the classifier."""
    def conv(cin: int, cout: int, k: int, side: int) -> tuple[int, float]:
        weights = cin * cout * k * k
        return weights, 2.0 * weights * side * side  # FLOPs = 2 × multiply-adds
    layers = []
    w, f = conv(3, 64, 7, 112)
    layers.append(Layer("stem", (w, 2 * 64), f))  # conv1 and its batch norm
    cin, side = 64, 56  # after the 3×3 stride-2 max pool
    for stage, (width, blocks) in enumerate(((64, 3), (128, 4), (256, 6), (512, 3)), 1):
        for b in range(blocks):
            stride = 2 if (b == 0 and stage > 1) else 1
            out_side = side // stride
            parts = [conv(cin, width, 1, side), conv(width, width, 3, out_side),
                     conv(width, 4 * width, 1, out_side)]
            norms = 2 * (width + width + 4 * width)
            if b == 0:  # the projection shortcut
                parts.append(conv(cin, 4 * width, 1, out_side))
                norms += 2 * 4 * width
            layers.append(Layer(f"stage {stage} block {b + 1}", tuple(p[0] for p in parts) + (norms,),
                                sum(p[1] for p in parts)))
            cin, side = 4 * width, out_side
    layers.append(Layer("classifier", (2048 * 1000, 1000), 2.0 * 2048 * 1000))
    return Model("resnet-50", "ResNet-50", tuple(layers), "224×224 image", 64)


MODELS = {"llama-7b": llama_7b, "resnet-50": resnet_50}


def model(name: str) -> Model:
    """A preset by name, or a RingsimError listing them."""
    try:
        return MODELS[name]()
    except KeyError:
        raise RingsimError(f"unknown model {name!r}; choose one of: {', '.join(MODELS)}") from None


def parse_layers(spec: str, flops_per_param: float = 2.0) -> Model:
    """Layers from a spec: sizes in forward order, '131M,32x202M,131M' (K, M, B: ×1,000…).

    Each layer is one tensor; its forward costs `flops_per_param` FLOPs per parameter per sample.
    """
    from ..core.units import parse_params
    if not str(spec).strip():
        raise RingsimError("--layers is empty: give the layers' sizes, e.g. 131M,32x202M,131M")
    layers = []
    for item in str(spec).split(","):
        item = item.strip()
        count, sep, size = item.partition("x")
        if not sep:
            count, size = "1", item
        try:
            repeat = int(count)
        except ValueError:
            raise RingsimError(f"--layers: {echo(item)} should be SIZE or COUNTxSIZE, e.g. 32x202M") from None
        if not 1 <= repeat <= 100_000:
            raise RingsimError(f"--layers: a repeat count must be from 1 to 100,000, got {repeat}")
        try:
            params = parse_params(size)
        except RingsimError as error:
            raise RingsimError(f"--layers: {error}") from None
        for _ in range(repeat):
            layers.append(Layer(f"layer {len(layers) + 1}", (params,), flops_per_param * params))
        if len(layers) > 100_000:
            raise RingsimError("--layers: at most 100,000 layers")
    if not layers:
        raise RingsimError("--layers needs at least one layer")
    return Model("layers", "custom layers", tuple(layers), "sample", 1)
