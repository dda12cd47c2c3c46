"""The benchmark runner end to end at tiny sizes (``python -m bench --smoke``), so it cannot rot.

It runs on a small synthetic data set written here in the two public files' formats (the real
ones are not part of the repository): real server processes, real HTTP, the official MCP client,
every stage. The figures it prints are not checked, only that every stage produced them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
# A guard against a hang, not a speed target: the run takes about a minute on a quiet machine
# and went past 110 s beside another test run.
SMOKE_TIMEOUT_S = 300

TEAM = [
    ("Ana", "We moved the nightly build to the self-hosted runner because hosted minutes ran out."),
    ("Ben", "Good call. Did the cache for the Rust toolchain survive the move?"),
    (
        "Ana",
        "Yes, the cache lives on the runner's local SSD now, so warm builds take four minutes.",
    ),
    ("Ben", "I adopted a cat from the shelter last weekend, she is called Pixel."),
    ("Ana", "Lovely! My sister is getting married in Lisbon next June."),
    ("Ben", "The staging database runs PostgreSQL 16 with pgvector for the search feature."),
    ("Ana", "Deploys to production need one approval from the platform team on the release PR."),
    ("Ben", "I started learning the cello in March, practising every morning before work."),
    ("Ana", "The flaky login test was a race in the session fixture; we fixed it with a lock."),
    ("Ben", "We use ruff for linting and mypy in strict mode on the shared packages."),
    ("Ana", "I ran a half marathon in Porto in October and finished in under two hours."),
    ("Ben", "The API listens on port 3000 inside the cluster, behind a ClusterIP service."),
]
QUESTIONS: list[dict[str, Any]] = [
    {"question": "Where does the nightly build run?", "evidence": ["D1:1"], "category": 4},
    {"question": "How long do warm builds take?", "evidence": ["D1:3"], "category": 4},
    {"question": "What is Ben's cat called?", "evidence": ["D1:4"], "category": 1},
    {"question": "When is the wedding?", "evidence": ["D1:5; D1:6"], "category": 2},
    {"question": "Which database does staging use?", "evidence": ["D:1:6"], "category": 3},
    {"question": "Would Ana enjoy a race?", "evidence": [], "category": 3},
    {"question": "What did the adversary say?", "evidence": ["D1:2"], "category": 5},
]
DEV_MEMORIES = [
    ("Chose PostgreSQL with pgvector as the storage backend for exact recall.", "decision"),
    ("Fixed the database locked error by enabling WAL mode.", "bug-fix"),
    ("The embedding model is all-MiniLM-L6-v2 with 384 dimensions.", "configuration"),
    ("Learned that batching embeddings cuts CPU time per text.", "learning"),
]
DEV_QUERIES = [
    ("exact", "Which storage backend did we choose?", ["bench:d-1"]),
    ("semantic", "Why was the database locked?", ["bench:d-2"]),
    ("cross_type", "What embedding setup do we run?", ["bench:d-3", "bench:d-4"]),
    ("negative", "What is the capital of Mongolia?", []),
]


def write_data(folder: Path) -> None:
    samples = []
    for n in range(2):
        turns = [
            {"speaker": who, "dia_id": f"D1:{i}", "text": f"{text} (thread {n})"}
            for i, (who, text) in enumerate(TEAM, start=1)
        ]
        samples.append(
            {
                "sample_id": f"conv-{n}",
                "conversation": {"speaker_a": "Ana", "speaker_b": "Ben", "session_1": turns},
                "qa": QUESTIONS,
            }
        )
    (folder / "locomo10.json").write_text(json.dumps(samples))
    devbench = {
        "memories": [
            {"id": f"bench:d-{n}", "content": text, "tags": ["devbench"], "memory_type": kind}
            for n, (text, kind) in enumerate(DEV_MEMORIES, start=1)
        ],
        "queries": [
            {"id": f"q-{n}", "category": category, "question": question, "expected_tags": tags}
            for n, (category, question, tags) in enumerate(DEV_QUERIES, start=1)
        ],
    }
    (folder / "devbench_dataset.json").write_text(json.dumps(devbench))
    (folder / "beam500k-dev.json").write_text(json.dumps(beam_chats()))


def beam_chats() -> list[dict[str, Any]]:
    """Two tiny chats in the BEAM file's shape: a question of each evidence shape, an
    abstention one and a knowledge update (original and updated message)."""
    chats = []
    for n in range(2):
        messages = [
            {"id": i, "role": "user" if i % 2 == 0 else "assistant", "content": f"{text} ({n})"}
            for i, (_, text) in enumerate(TEAM)
        ]
        messages.append(
            {"id": len(TEAM), "role": "user", "content": f"The API now listens on port 3443 ({n})."}
        )
        questions = {
            "information_extraction": [
                {"question": "Where does the nightly build run?", "source_chat_ids": [0]}
            ],
            "knowledge_update": [
                {
                    "question": "Which port does the API listen on?",
                    "source_chat_ids": {"original_info": [11], "updated_info": [len(TEAM)]},
                }
            ],
            "abstention": [{"question": "What did the kickoff meeting decide?"}],
            "event_ordering": [{"question": "What happened first?", "source_chat_ids": [99]}],
        }
        chats.append(
            {"chat": n + 1, "title": f"chat {n}", "messages": messages, "questions": questions}
        )
    return chats


def run_in_own_group(argv: list[str]) -> tuple[int, str]:
    """The runner's exit code and stderr. Past the limit the runner's whole process group is
    killed. Its servers are in sessions of their own, outside it: they die with the runner
    (``bench._server.tied_to_runner``), as ``test_killed_runner`` checks."""
    runner = subprocess.Popen(
        argv,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _, stderr = runner.communicate(timeout=SMOKE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(runner.pid, signal.SIGKILL)
        runner.communicate()
        raise
    return runner.returncode, stderr


@pytest.mark.timeout(SMOKE_TIMEOUT_S + 30)
def test_smoke_run_writes_every_stage(tmp_path: Path) -> None:
    data, out = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    write_data(data)
    started = time.monotonic()
    returncode, stderr = run_in_own_group(
        [sys.executable, "-m", "bench", "--data", str(data), "--out", str(out), "--smoke"]
    )
    elapsed = time.monotonic() - started
    assert returncode == 0, stderr[-4000:]
    results = json.loads((out / "results.json").read_text())
    assert results["stages"] == [
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
    ]
    multi = results["multiproc"]
    assert multi["three_processes"]["processes"] == 3
    assert multi["one_process"]["recall_p95_ms"] > 0 and multi["p95_ratio"] > 0
    revisions = results["revisions"]
    assert revisions["with_replaces"]["pairs"] == 5
    assert revisions["with_replaces"]["old_returned"] == 0
    assert revisions["without_replaces"]["old_returned"] >= 1
    assert revisions["latency"]["plain_p50_median_ms"] > 0

    updates = results["updates"]
    assert set(updates) == {
        "everyday",
        "everyday alone",
        "everyday distractors",
        "chat revisions",
        "chat distractors",
        "short",
        "long",
    }
    assert updates["chat revisions"]["updates"] == 6
    assert 0 <= updates["everyday distractors"]["older_first"] <= 6
    assert updates["everyday"]["updates"] == 6 and updates["everyday"]["newer_first"] >= 1
    assert updates["everyday alone"]["updates"] == 6
    assert all(0 <= row["false_links"] <= row["distractors"] for row in updates.values())

    cold = results["cold_start"]
    assert cold["empty_dir"]["median_s"] > 0 and cold["existing_dir"]["median_s"] > 0

    speed = results["speed"]
    assert [s["size"] for s in speed["sizes"]] == [30, 60]
    for size in speed["sizes"]:
        assert [r["concurrency"] for r in size["recall"]] == [1, 4]
        for row in size["recall"] + size["remember"]:
            assert 0 < row["p50_ms"] <= row["p95_ms"] <= row["p99_ms"]
            assert row["throughput_per_s"] > 0
        assert size["api_peak_rss_mib"] > 0
        # Measured only once the API's snapshot had caught up with the preload: the last
        # warm-up round and every measured recall were served from it.
        assert size["warm_up"]["rounds"] >= 1 and size["warm_up"]["last_round"]["misses"] == 0
        assert all(row["scan_snapshot"]["misses"] == 0 for row in size["recall"])
    steps = speed["breakdown"]["in_process"]
    assert {"embed", "vector_query", "counters_cached", "rank", "render"} <= set(steps)
    assert [r["shards"] for r in results["counters"]] == [0, 5]

    locomo = results["locomo"]
    assert locomo["turns"] == 2 * len(TEAM)
    # Per conversation: one empty question excluded, two malformed ones parsed and kept.
    assert locomo["evidence"]["questions_categories_1_4"] == 12
    assert locomo["evidence"]["empty_evidence_excluded"] == 2
    assert locomo["evidence"]["malformed_evidence_kept"] == 4
    assert locomo["evidence"]["questions_scored"] == 10
    assert len(locomo["modes"]) == 5
    for result_set in [locomo["plain_cosine"], *locomo["modes"].values()]:
        for k in ("R@1", "R@5", "R@10"):
            assert 0 <= result_set["all"][k] <= 1
    assert 0 <= locomo["fused_order"]["all"]["R@5"] <= 1
    beam = results["beam"]
    assert beam["messages"] == 2 * (len(TEAM) + 1)
    # Per chat: the extraction and the update question are scored, the abstention one is
    # asked, and the one whose evidence names no message of the chat is dropped.
    assert beam["evidence"]["with_evidence"] == 4 and beam["evidence"]["abstention"] == 2
    assert beam["evidence"]["updates_scored"] == 2
    default = beam["modes"]["balanced/5 (default)"]
    assert 0 <= default["all"]["R@5"] <= 1 and default["abstention"]["questions"] == 2
    assert default["answer_size"]["mean_chars"] > 0
    devbench = results["devbench"]
    assert set(devbench["modes"]) == {"precision", "balanced", "exploratory"}
    assert devbench["modes"]["balanced"]["negative"]["queries"] == 1

    tech = results["technotes"]
    assert tech["notes"] == 10
    assert {"plain cosine top-10", "fused relevance top-10", "recall balanced/5 (default)"} <= set(
        tech["retrieval"]
    )
    for backend in ("postgres", "s3"):
        probe = results["probe"][backend]
        assert probe["planted"] == 50 and 0 <= probe["found_in_top_3"] <= 50
    sweep = results["sweep"]
    assert len(sweep["families"]) == 4 and "plain cosine" in sweep["methods"]
    # The load run, short: mixed calls from 16 clients for 10 s, and not one error.
    soak = results["soak"]
    assert soak["errors"] == 0, soak["error_samples"]
    assert all(soak["calls"][tool] > 0 for tool in ("recall", "remember", "forget"))
    assert len(soak["rss"]) >= 2 and all(s["rss_mib"] > 0 for s in soak["rss"])

    summary = (out / "summary.md").read_text()
    assert summary.startswith("# Benchmarks") and "LoCoMo" in summary
    assert "## Retrieval targets" in summary and "## Keyword probe" in summary
    assert "## Probable updates" in summary
    print(f"smoke run took {elapsed:.1f} s")
