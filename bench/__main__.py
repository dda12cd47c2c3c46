"""One command for speed, scale and retrieval quality against the real service.

    python -m bench --data /work/shared/bench-data --out bench/results [--only speed,locomo]
    python -m bench --data ... --out ... --smoke          # tiny sizes, well under a minute
    python -m bench --data ... --out ... --publish        # also write docs/benchmarks.md + plot

Stages (``--only``, comma-separated; all by default):
  coldstart  spawn to /health 200 with --local, on an empty and on an existing data dir; a
             stdio server's first answer, cold and warm (and mcp-memory-service's, if installed)
  speed      remember/recall over HTTP at 1k, 10k, 50k memories in one tenant, concurrency
             1/8/16/32; peak RSS; recall's time split at 10k
  counters   a cold counter read against 0-1000 unfolded shards
  locomo     turn-level R@1/5/10 per recall mode against plain cosine
  beam       message-level R@1/5/10 on long technical chats (BEAM 500K dev) per recall mode
             against plain cosine; HIGH on abstentions, updates above originals, answer size
  devbench   hit rates on exact/semantic/cross-type queries, confident answers to negatives
  technotes  R@1/5/10 on long technical notes (bench/data/) against plain cosine
  probe      identifiers planted among 10,000 technical memories, found by name alone
  multiproc  three API processes and the compactor on one PostgreSQL, 80 % recall and 20 %
             remember each, against the same load on one process
  revisions  50 corrected facts among 2,000 memories, with and without replaces; recall p50
             at 10k with 1,000 replacement records and 1,000 expiring memories
  updates    probable updates over MCP: everyday and generated pairs, newer above older; false
             links on same-pattern distractors (bench/_updates.py)
  sweep      every fusion method on recall's own candidates (bench/sweep_fusion.py), offline
  soak       30 minutes of mixed load at concurrency 16 on 10,000 memories, RSS every minute

The runner starts its own ``mcp-memory-api --local`` processes in a temporary data dir and stops
them; it writes ``results.json``, ``summary.md`` and ``recall_latency.png`` into ``--out``.
The data files are read where they are (``--data``), never copied.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final

from bench._beam import run_beam
from bench._data import (
    BeamChat,
    Conversation,
    MemoryTexts,
    load_beam,
    load_devbench,
    load_locomo,
    load_tech_notes,
)
from bench._first_answer import FIRST_ANSWER_REPS, FIRST_ANSWER_REPS_SMOKE, run_first_answer
from bench._inproc import Local, open_local
from bench._multiproc import run_multiproc
from bench._probe import run_probe
from bench._quality import run_devbench, run_locomo, run_tech_notes
from bench._report import git_commit, machine, plot, speed_run, summary
from bench._revisions import run_revisions
from bench._server import ApiServer, exit_on_sigterm
from bench._soak import SHOWN_EVERY as SOAK_SHOWN_EVERY
from bench._soak import run_soak
from bench._speed import FULL, SMOKE, SpeedPlan, run_cold_start, run_counters, run_speed
from bench._updates import run_updates
from bench.sweep_fusion import measure as sweep_measure
from bench.sweep_fusion import summary as sweep_summary

STAGES: Final = (
    "coldstart",
    "speed",
    "counters",
    "locomo",
    "beam",
    "devbench",
    "technotes",
    "probe",
    "multiproc",
    "revisions",
    "updates",
    "sweep",
    "soak",
)
STAGE_KEYS: Final = {
    "coldstart": "cold_start",
    "speed": "speed",
    "counters": "counters",
    "locomo": "locomo",
    "beam": "beam",
    "devbench": "devbench",
    "technotes": "technotes",
    "probe": "probe",
    "multiproc": "multiproc",
    "revisions": "revisions",
    "updates": "updates",
    "sweep": "sweep",
    "soak": "soak",
}
ROOT: Final = Path(__file__).resolve().parent.parent
DOCS: Final = ROOT / "docs"
SMOKE_CONVERSATIONS: Final = 2
SMOKE_TURNS: Final = 40
SMOKE_QUESTIONS: Final = 10
SMOKE_NOTES: Final = 10
SMOKE_BEAM_CHATS: Final = 2
SMOKE_BEAM_MESSAGES: Final = 120


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description=(__doc__ or "").split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join((__doc__ or "").split("\n\n")[1:]),
    )
    parser.add_argument("--data", type=Path, help="folder of the data sets (required to run)")
    parser.add_argument("--out", type=Path, required=True, help="where results are written")
    parser.add_argument("--only", default=",".join(STAGES), help="comma-separated stages")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks, not figures")
    parser.add_argument(
        "--publish", action="store_true", help="also write docs/benchmarks.md and its plot"
    )
    parser.add_argument(
        "--report-from",
        type=Path,
        nargs="+",
        default=None,
        metavar="RESULTS_JSON",
        help="run nothing: rewrite the summary (and plot) from saved results; a later file's "
        "stages replace an earlier one's",
    )
    return parser


def _log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _smoke_subset(conversations: list[Conversation]) -> list[Conversation]:
    subset = []
    for conversation in conversations[:SMOKE_CONVERSATIONS]:
        turns = conversation.turns[:SMOKE_TURNS]
        known = {t.dia_id for t in turns}
        questions = [q for q in conversation.questions if set(q.evidence.turns) <= known][
            :SMOKE_QUESTIONS
        ]
        subset.append(Conversation(conversation.sample_id, turns, questions))
    return subset


def _beam_chats(data: Path, smoke: bool) -> list[BeamChat]:
    chats = load_beam(data)
    if not smoke:
        return chats
    return [chat.first(SMOKE_BEAM_MESSAGES) for chat in chats[:SMOKE_BEAM_CHATS]]


@contextlib.asynccontextmanager
async def _workspace(data_dir: Path) -> AsyncIterator[tuple[Local, ApiServer]]:
    """The runner's in-process view of the database and one API process on the same data dir."""
    async with open_local(data_dir) as local:
        server = await ApiServer.start(data_dir)
        try:
            yield local, server
        finally:
            code = await server.stop()
            if code != 0:
                _log(f"the API exited with {code}: " + " | ".join(server.stderr_lines[-5:]))


# Every stage but these needs the API process and the in-process stores.
SERVER_STAGES: Final = frozenset(STAGES) - {"coldstart", "sweep"}


async def _served_stages(
    local: Local,
    server: ApiServer,
    args: argparse.Namespace,
    plan: SpeedPlan,
    stages: set[str],
    conversations: list[Conversation],
    results: dict[str, Any],
) -> None:
    """The stages that need the API process and the in-process stores, in STAGES order."""
    # Speed, multiproc, revisions and soak draw texts and questions from all of LoCoMo, smoke
    # or not (the locomo stage asks ``conversations``); each data file is parsed once.
    every_conversation = load_locomo(args.data)
    texts = MemoryTexts(every_conversation)
    questions = [q.text for c in every_conversation for q in c.questions]
    devbench = load_devbench(args.data)
    tech = load_tech_notes()
    if "speed" in stages:
        results["speed"] = await run_speed(local, server, texts, questions, plan, _log)
    if "counters" in stages:
        results["counters"] = await run_counters(local, plan)
    if "locomo" in stages:
        results["locomo"] = await run_locomo(local, server, conversations, _log)
    if "beam" in stages:
        results["beam"] = await run_beam(local, server, _beam_chats(args.data, args.smoke), _log)
    if "devbench" in stages:
        results["devbench"] = await run_devbench(local, server, devbench, _log)
    if "technotes" in stages:
        results["technotes"] = await run_tech_notes(
            local, server, tech.first(SMOKE_NOTES) if args.smoke else tech, _log
        )
    if "probe" in stages:
        results["probe"] = await run_probe(local, server, plan, _log)
    if "multiproc" in stages:
        results["multiproc"] = await run_multiproc(
            local,
            server,
            texts,
            questions,
            memories=plan.multiproc_memories,
            recalls_each=plan.multiproc_recalls,
            log=_log,
        )
    if "revisions" in stages:
        results["revisions"] = await run_revisions(
            local,
            server,
            tech=tech,
            devbench=devbench,
            conversations=every_conversation,
            questions=questions,
            smoke=args.smoke,
            log=_log,
        )
    if "updates" in stages:
        results["updates"] = await run_updates(server, smoke=args.smoke, log=_log)
    if "soak" in stages:
        results["soak"] = await run_soak(
            local,
            server,
            texts,
            questions,
            memories=plan.soak_memories,
            duration_s=plan.soak_s,
            sample_every_s=plan.soak_s / (30 * SOAK_SHOWN_EVERY),
            log=_log,
        )


async def run(args: argparse.Namespace) -> dict[str, Any]:
    stages = {s.strip() for s in args.only.split(",") if s.strip()}
    unknown = stages - set(STAGES)
    if unknown:
        raise SystemExit(f"unknown stage(s) {sorted(unknown)}; choose from {', '.join(STAGES)}")
    plan = SMOKE if args.smoke else FULL
    conversations = load_locomo(args.data)
    if args.smoke:
        conversations = _smoke_subset(conversations)
    started = time.time()
    results: dict[str, Any] = {
        "command": "python -m bench " + shlex.join(sys.argv[1:]),
        "commit": git_commit(ROOT),
        "started_at": time.strftime("%Y-%m-%d %H:%M %Z"),
        "smoke": args.smoke,
        "stages": [s for s in STAGES if s in stages],
        "machine": machine(),
        "load": {"start": list(os.getloadavg())},
        "plan": plan.__dict__,
    }
    # A short path: PostgreSQL's Unix socket lives in the data dir and has a 107-byte limit.
    with tempfile.TemporaryDirectory(prefix="mmb-", dir="/tmp") as tmp:
        work = Path(tmp)
        db = work / "db"
        if "coldstart" in stages:
            results["cold_start"] = await run_cold_start(work, plan.cold_start_reps, _log)
            results["first_answer"] = await run_first_answer(
                work,
                conversations,
                FIRST_ANSWER_REPS_SMOKE if args.smoke else FIRST_ANSWER_REPS,
                _log,
            )
            # An initialised database with no memories: reusing it spares another initdb.
            (work / f"cold-{plan.cold_start_reps - 1}").rename(db)
        if stages & SERVER_STAGES:
            async with _workspace(db) as (local, server):
                await _served_stages(local, server, args, plan, stages, conversations, results)
    if "sweep" in stages:
        _log("sweep: every fusion method on recall's candidates, offline")
        notes = SMOKE_NOTES if args.smoke else None
        results["sweep"] = sweep_summary(await sweep_measure(args.data, notes=notes))
    results["load"]["end"] = list(os.getloadavg())
    results["duration_s"] = round(time.time() - started, 1)
    return results


def write(results: dict[str, Any], out: Path, *, publish: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    plotted = plot(results, out / "recall_latency.png")
    (out / "summary.md").write_text(
        summary(results, plot_ref="recall_latency.png" if plotted else None)
    )
    if publish:
        published = plotted and plot(results, DOCS / "benchmarks" / "recall_latency.png")
        (DOCS / "benchmarks.md").write_text(
            summary(results, plot_ref="benchmarks/recall_latency.png" if published else None)
        )


def merged(paths: list[Path]) -> dict[str, Any]:
    """Saved results combined: the first file's run, each later file's stages on top."""
    results: dict[str, Any] = json.loads(paths[0].read_text())
    runs = [run for run in [speed_run(results)] if run is not None]
    for path in paths[1:]:
        later = json.loads(path.read_text())
        if "speed" in later["stages"] and (run := speed_run(later)) is not None:
            runs.append(run)
        for stage, key in STAGE_KEYS.items():
            if stage in later["stages"]:
                results[key] = later[key]
        # Each part names its own commit and time: the header's are the first file's.
        results["command"] += (
            f"; then {later['command']} (its {', '.join(later['stages'])}; commit "
            f"{later.get('commit') or 'unknown'}, {later['started_at']})"
        )
        results["load"]["end"] = later["load"]["end"]
    results["speed_runs"] = runs
    return results


def main() -> None:
    parser = _parser()
    args = parser.parse_args()
    if args.report_from:
        write(merged(args.report_from), args.out, publish=args.publish)
        _log(f"rewrote {args.out / 'summary.md'} from {len(args.report_from)} result file(s)")
        return
    if args.data is None:
        parser.error("--data is required to run the benchmarks")
    exit_on_sigterm()
    results = asyncio.run(run(args))
    write(results, args.out, publish=args.publish)
    _log(f"wrote {args.out / 'results.json'} and {args.out / 'summary.md'}")


if __name__ == "__main__":
    main()
