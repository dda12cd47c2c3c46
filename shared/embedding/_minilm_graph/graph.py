"""Matching over an ONNX graph (producers, consumers, constants) and swapping rewrites in."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import numpy_helper

from shared.errors import GraphPatternError

MS_DOMAIN = "com.microsoft"
# The raw 0/1 attention mask as int32, which is what Attention's mask_index input takes.
MASK_INT32 = "attention_mask_int32"
# sqrt(2) as the exported float32 constant, compared exactly.
SQRT2 = float(np.float32(np.sqrt(2)))


class Graph:
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
class Projection:
    """``x @ weight + bias``, split into heads by a Reshape and a (0, 2, 1, 3) Transpose."""

    x: str
    weight: str
    bias: str


@dataclass(frozen=True)
class Rewrite:
    """New nodes that produce ``output`` in place of the nodes that produced it before."""

    output: str
    nodes: list[onnx.NodeProto]


def replace_nodes(
    model: onnx.ModelProto, rewrites: list[Rewrite], *, extra: list[onnx.NodeProto]
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
