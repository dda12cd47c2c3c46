"""Each layer's attention as one ``Attention`` node, and its bias and erf GELU as one
``BiasGelu`` node (see the package docstring)."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

from shared.embedding._minilm_graph.graph import (
    MASK_INT32,
    MS_DOMAIN,
    SQRT2,
    Graph,
    Projection,
    Rewrite,
    replace_nodes,
)
from shared.errors import GraphPatternError


def _projection(g: Graph, transpose: onnx.NodeProto) -> Projection:
    perm = [list(helper.get_attribute_value(a)) for a in transpose.attribute if a.name == "perm"]
    if perm != [[0, 2, 1, 3]]:
        raise GraphPatternError(f"{transpose.name} does not split heads")
    linear = g.up(g.up(transpose, 0, "Reshape"), 0, "Add")
    matmul = g.up(linear, 0, "MatMul")
    return Projection(x=matmul.input[0], weight=matmul.input[1], bias=linear.input[1])


def _attention(g: Graph, softmax: onnx.NodeProto, *, index: int, num_heads: int) -> Rewrite:
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
    return Rewrite(
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


def _check_key_mask(g: Graph, where: onnx.NodeProto) -> None:
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


def _columns(g: Graph, weight: str) -> int:
    """The output width of a projection weight: a plain initializer, or the packaged model's
    ``Cast(weight_q) * weight_scale`` whose per-column scale has shape (1, columns)."""
    init = g.initializers.get(weight)
    dequantise = g.producer.get(weight)
    if init is None and dequantise is not None and dequantise.op_type == "Mul":
        init = g.initializers.get(dequantise.input[1])
    if init is None or len(init.dims) != 2:
        raise GraphPatternError(f"cannot tell the width of {weight}")
    return int(init.dims[1])


def _bias_gelu(g: Graph, erf: onnx.NodeProto) -> Rewrite:
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
    if constants != (SQRT2, 1.0, 0.5):
        raise GraphPatternError(f"{gelu.name} is not x * 0.5 * (erf(x / sqrt(2)) + 1)")
    if sorted(gelu.input) != sorted([linear.output[0], half.output[0]]):
        raise GraphPatternError(f"{gelu.name} does not multiply the GELU by its own input")
    return Rewrite(
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
    g = Graph(model.graph)
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
    replace_nodes(model, rewrites, extra=[mask])
    if all(opset.domain != MS_DOMAIN for opset in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MS_DOMAIN, 1))
    return model
