"""The graph the local model runs, prepared once and kept on disk for every later start.

Preparing it (``_minilm_graph``: fused kernels, then int8 arithmetic) needs the ``onnx`` package,
whose import alone (its ``ml_dtypes`` extension) costs more than loading the model does, and it
sits on the path to a desktop client's first answer. The prepared graph depends only on the
package's model file and on the rewrite's own code, so once written under the data dir it is
handed to onnxruntime as a file, and a start that finds it never imports ``onnx`` at all.

The file's name carries a key over both inputs: a new model package or a changed rewrite gets a
file of its own, and a stale one is never read. It is written to a temporary name and renamed,
so a process killed mid-write leaves no half file under the real name, and processes sharing a
data dir may write it at once. A file onnxruntime cannot open is removed and prepared again:
the cache costs a start speed, never correctness.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from pathlib import Path
from typing import Final

logger = logging.getLogger(__name__)

CACHE_DIRNAME: Final = "model"
_REWRITE_SOURCES: Final = Path(__file__).parent / "_minilm_graph"


def cache_folder(data_dir: Path) -> Path:
    """Where the prepared graph lives inside a data dir."""
    return data_dir.expanduser() / CACHE_DIRNAME


def graph_key(model_path: Path) -> str:
    """A name for the graph prepared from ``model_path`` by today's rewrite: the model file's
    identity (path, size, modification time) and the rewrite's source files, hashed."""
    digest = hashlib.sha256()
    stat = model_path.stat()
    digest.update(f"{model_path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    for source in sorted(_REWRITE_SOURCES.glob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:24]


def cached_graph_path(folder: Path, model_path: Path) -> Path:
    return folder / f"minilm-int8-{graph_key(model_path)}.onnx"


def store_graph(path: Path, serialised: bytes) -> None:
    """Write the prepared graph to ``path`` atomically; a folder that cannot be written (a
    read-only volume) is logged and the start goes on with the graph in memory."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".minilm-", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(serialised)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as error:
        logger.warning(
            "embedder_graph_not_cached", extra={"folder": str(path.parent), "reason": str(error)}
        )
        return
    for stale in path.parent.glob("minilm-int8-*.onnx"):
        if stale != path:
            with contextlib.suppress(OSError):
                stale.unlink()


def drop_graph(path: Path) -> None:
    """Remove a cached graph onnxruntime could not open."""
    logger.warning("embedder_graph_cache_unreadable", extra={"file": str(path)})
    with contextlib.suppress(OSError):
        path.unlink()
