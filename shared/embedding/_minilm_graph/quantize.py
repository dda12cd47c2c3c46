"""The fused projections run in int8 arithmetic on the stored int8 weights (see the package
docstring)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from shared.embedding._minilm_graph.graph import MS_DOMAIN, Graph, Rewrite, replace_nodes
from shared.errors import GraphPatternError


@dataclass(frozen=True)
class _Int8Weight:
    """A projection weight as the package stores it: int8 values and one fp32 scale per column."""

    values: np.ndarray
    scales: np.ndarray


def _stored_int8(g: Graph, name: str) -> tuple[onnx.TensorProto, onnx.TensorProto] | None:
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


def _int8_weight(g: Graph, name: str) -> _Int8Weight | None:
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
) -> tuple[Rewrite, list[onnx.TensorProto]]:
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
    return Rewrite(output=node.output[0], nodes=[quantized]), tensors


def _int8_lookup(g: Graph, gather: onnx.NodeProto) -> Rewrite | None:
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
    return Rewrite(
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
    g = Graph(model.graph)
    rewrites: list[Rewrite] = []
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
    replace_nodes(model, rewrites, extra=[])
    return model


def _int8_attention(g: Graph, node: onnx.NodeProto) -> tuple[Rewrite, list[onnx.TensorProto]]:
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
    rewrite = Rewrite(
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
