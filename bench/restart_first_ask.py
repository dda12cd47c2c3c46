"""First asks after a restart: a long chat's questions, each asked once over HTTP of a server
started afresh on it, for two checkouts in alternation.

    python bench/restart_first_ask.py --data /work/shared/bench-data --baseline OLD_CHECKOUT \\
        [--beam-chat 1] [--starts 4] [--data-dir DIR]

BEAM 500K dev chat N's messages are preloaded into one tenant (``bench._inproc``, as ``python
bench/recall_cost.py split --beam N`` preloads them; ``--data-dir`` keeps them for the next run).
Then, ``--starts`` times per checkout, alternating which goes first: the checkout's own
``mcp-memory-api --local`` is started on the data dir, asked one question of no chat (the model
and the tenant's index loaded), then each of the chat's questions once through the official
client, concurrency 1. Nothing a server keeps between questions (stems, term arrays, summed
counts, a long memory's pieces) has been made yet for these texts: this is what a server
restarted on a project pays for its first answers, which ``bench/peer_http.py`` does not show
(its servers have just written every text they are asked about). Printed: each start's p50 and
the ratio of the medians of the starts' p50s (ours over the baseline's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Final

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._beam import fitted
from bench._client import run_load
from bench._data import load_beam
from bench._inproc import open_local, preload
from bench._server import ApiServer, exit_on_sigterm

TENANT: Final = "restart-first-ask"
# A question of no chat: loads the model and the tenant's index before the timed questions.
WARM_UP: Final = "zebra xylophone quantum"


async def _preloaded(data_dir: Path, messages: list[str]) -> None:
    # Noted beside the data dir, as bench/recall_cost.py notes its own.
    note = data_dir.with_name(data_dir.name + ".preloaded")
    if note.exists():
        return
    async with open_local(data_dir) as local:
        await preload(local, TENANT, messages.__getitem__, range(len(messages)), cache={})
    note.write_text(str(len(messages)))


async def _first_asks(checkout: Path, data_dir: Path, questions: list[str]) -> float:
    """One fresh server of ``checkout``: its p50 over the questions, each asked once."""
    server = await ApiServer.start(data_dir, checkout=checkout)
    try:
        await run_load(server.url, TENANT, [("recall", {"query": WARM_UP})], concurrency=1)
        calls = [("recall", {"query": question}) for question in questions]
        load = await run_load(server.url, TENANT, calls, concurrency=1)
        return load.latency.p50_ms
    finally:
        await server.stop()


async def main(args: argparse.Namespace) -> None:
    chat = next(c for c in load_beam(args.data) if c.chat == args.beam_chat)
    questions = [question.text for question in chat.questions]
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="restart-first-ask-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    await _preloaded(data_dir, [fitted(message.stored) for message in chat.messages])
    sides = {"ours": Path(__file__).resolve().parent.parent, "baseline": args.baseline}
    p50: dict[str, list[float]] = {name: [] for name in sides}
    for start in range(args.starts):
        order = list(sides) if start % 2 == 0 else list(reversed(sides))
        for name in order:
            p50[name].append(await _first_asks(sides[name], data_dir, questions))
    medians = {name: statistics.median(values) for name, values in p50.items()}
    print(
        json.dumps(
            {
                "chat": args.beam_chat,
                "questions": len(questions),
                "p50_ms_by_start": p50,
                "ours/baseline": round(medians["ours"] / medians["baseline"], 3),
            }
        )
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/bench-data"))
    parser.add_argument("--baseline", type=Path, required=True, help="another checkout")
    parser.add_argument("--beam-chat", type=int, default=1)
    parser.add_argument("--starts", type=int, default=4, help="fresh servers per checkout")
    parser.add_argument("--data-dir", type=Path, default=None, help="kept for the next run")
    return parser


if __name__ == "__main__":
    exit_on_sigterm()
    asyncio.run(main(_parser().parse_args()))
