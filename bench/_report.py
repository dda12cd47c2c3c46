"""The machine, the Markdown summary and the recall latency plot, all from the results dict."""

from __future__ import annotations

import os
import platform
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

TARGET_P50_MS = 15.0
TARGET_P95_MS = 40.0


def machine() -> dict[str, Any]:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "unknown",
    )
    mem_kib = next(
        int(line.split()[1])
        for line in Path("/proc/meminfo").read_text().splitlines()
        if line.startswith("MemTotal:")
    )
    return {
        "cpu_model": model,
        "cores": len(os.sched_getaffinity(0)),
        "ram_gib": round(mem_kib / 2**20, 1),
        "python": platform.python_version(),
        "kernel": platform.release(),
    }


def git_commit(root: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
        )
    except OSError:
        return None
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "shared", "services"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    commit = out.stdout.strip() or None
    return f"{commit}+dirty" if commit and dirty.stdout.strip() else commit


def plot(results: dict[str, Any], path: Path) -> bool:
    speed = results.get("speed")
    if not speed or not speed["sizes"]:
        return False
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    sizes = [s["size"] for s in speed["sizes"]]
    levels = [r["concurrency"] for r in speed["sizes"][0]["recall"]]
    fig, axes = plt.subplots(1, len(levels), figsize=(4 * len(levels), 3.6), sharey=False)
    for ax, level in zip(axes if len(levels) > 1 else [axes], levels, strict=True):
        rows = [next(r for r in s["recall"] if r["concurrency"] == level) for s in speed["sizes"]]
        for key, style in (("p50_ms", "o-"), ("p95_ms", "s--"), ("p99_ms", "^:")):
            ax.plot(sizes, [r[key] for r in rows], style, label=key.removesuffix("_ms"))
        if level == 1:
            ax.axhline(TARGET_P50_MS, color="green", lw=0.8, label="target p50")
            ax.axhline(TARGET_P95_MS, color="red", lw=0.8, label="target p95")
        ax.set_xscale("log")
        ax.set_xticks(sizes, [f"{s:,}" for s in sizes])
        ax.set_title(f"recall, concurrency {level}")
        ax.set_xlabel("memories in the tenant")
        ax.set_ylabel("ms (client-observed, MCP over HTTP)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _speed_lines(speed: dict[str, Any], plot_ref: str | None) -> list[str]:
    lines = [
        "## Speed and scale",
        "",
        "Client-observed latency through the official MCP client over HTTP (one client per "
        "concurrent caller, closed loop), one tenant. The runner's clients share the 2 cores "
        "with the API and PostgreSQL. Memories beyond what remember added over HTTP were "
        "preloaded in-process through the stores and the embedder (batched embed_many, no "
        'dedup): LoCoMo turns as "speaker: text", cycled through the '
        f"{speed['distinct_texts']:,} distinct turns ("
        + ", ".join(
            f"at {s['size']:,} each turn ×{s['size'] / speed['distinct_texts']:.1f}"
            for s in speed["sizes"]
            if s["size"] > speed["distinct_texts"]
        )
        + "; the exact scan costs the same whatever the rows say). Recall queries are LoCoMo "
        "questions; remember stores new texts (two turns joined). Only the HTTP calls are timed. "
        "Transport = client-observed mean − the server's own tool duration mean. The preload is "
        "another writer to the API, so before each size is measured, warm-up rounds of 20 "
        "recalls repeat until one is served wholly from the API's scan snapshot (how long that "
        "took is in the second table). Before each measured load the runner collects and "
        "freezes its own heap (imports, preloaded data), so its collections cannot stall the "
        "clients; the clients' own garbage is collected as usual.",
        "",
        "| memories | tool | conc. | p50 ms | p95 ms | p99 ms | throughput /s | "
        "server tool mean ms | transport mean ms | CPU ms/call api / pg / client |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for size in speed["sizes"]:
        for row in size["recall"] + size["remember"]:
            cpu = row["cpu_ms_per_call"]
            lines.append(
                f"| {size['size']:,} | {row['tool']} | {row['concurrency']} | "
                f"{_fmt(row['p50_ms'])} | {_fmt(row['p95_ms'])} | {_fmt(row['p99_ms'])} | "
                f"{_fmt(row['throughput_per_s'])} | {_fmt(row['server_tool_mean_ms'])} | "
                f"{_fmt(row['transport_mean_ms'])} | "
                f"{_fmt(cpu['api'])} / {_fmt(cpu['postgres'])} / {_fmt(cpu['client'])} |"
            )
    lines += [
        "",
        "| memories | API peak RSS (VmHWM) MiB | preload s | snapshot caught up after |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {s['size']:,} | {s['api_peak_rss_mib']} | {s['preload_s']} | {_caught_up(s)} |"
        for s in speed["sizes"]
    ]
    if plot_ref:
        lines += ["", f"![recall latency percentiles against memory count]({plot_ref})"]
    return [*lines, ""]


def _caught_up(size: dict[str, Any]) -> str:
    """How long warming up took at this size; runs before the warm-up waited say so."""
    warm = size.get("warm_up")
    if warm is None:
        return "not measured (20 warm-up calls, no wait)"
    rounds = "round" if warm["rounds"] == 1 else "rounds"
    return f"{warm['seconds']} s ({warm['rounds']} warm-up {rounds})"


def _breakdown_lines(breakdown: dict[str, Any]) -> list[str]:
    steps = breakdown["in_process"]
    http = breakdown["http_c1"]
    named = [
        ("embedding (embedder.embed)", "embed"),
        ("vector query (nearest 100 + visibility)", "vector_query"),
        ("keyword scoring (BM25 over all memories, cached index)", "keyword_scoring"),
        ("counters, cached (steady state)", "counters_cached"),
        ("counters, cold read (after the 60 s cache)", "counters_cold"),
        ("replacement records (cached)", "replacements"),
        ("keyword hits + first fusion", "first_fusion"),
        ("bodies of keyword-only hits", "bodies"),
        ("feedback + second fusion", "feedback"),
        ("newer versions", "newer_versions"),
        ("ranking (rank)", "rank"),
        ("rendering (render_recall: text and structured)", "render"),
        ("structured output (to_builtins)", "structured"),
        ("MCP framing in the server (POST /mcp handler, answer ready)", "mcp_framing"),
        ("shared.operations.recall whole", "recall_whole"),
        ("the recall tool whole (guard, recall, rendering)", "tool_whole"),
    ]
    lines = [
        f"## Where recall's time goes ({breakdown['size']:,} memories, concurrency 1)",
        "",
        f"In-process, the service's own steps timed one by one over {breakdown['queries']} "
        "LoCoMo questions against the same database (balanced mode):",
        "",
        "| step | mean ms | p50 ms | p95 ms |",
        "|---|---|---|---|",
    ]
    for label, key in named:
        s = steps[key]
        lines.append(f"| {label} | {s['mean_ms']:.2f} | {s['p50_ms']:.2f} | {s['p95_ms']:.2f} |")
    floor = breakdown["transport_floor_echo"]
    lines += [
        "",
        f"Through HTTP at the same size: client-observed mean {http['mean_ms']:.2f} ms, server "
        f"tool duration mean {_fmt(http['server_tool_mean_ms'], 2)} ms (from "
        "`mcp_memory_tool_duration_seconds`), so transport (client − tool) "
        f"{_fmt(http['transport_mean_ms'], 2)} ms. The bare MCP round trip to a tool that does "
        f"nothing (bench/bench_transport.py's `echo`, in-process) is {floor['mean_ms']:.2f} ms "
        f"mean, {floor['p50_ms']:.2f} ms p50.",
        "",
    ]
    if http.get("server_embed_mean_ms") is not None:
        lines += [
            "The server's own histograms over the same HTTP run: embedding mean "
            f"{http['server_embed_mean_ms']:.2f} ms, vector query mean "
            f"{_fmt(http.get('server_vector_query_mean_ms'), 2)} ms.",
            "",
        ]
    lines += _attribution(steps, http)
    observed = breakdown["metrics_observed"]
    unwired = [name for name, seen in observed.items() if not any(seen.values())]
    if unwired:
        lines += [
            "Not wired: " + ", ".join(f"`{n}`" for n in unwired) + " exported but never "
            "observed during the run (no samples on GET /metrics), hence the in-process split.",
            "",
        ]
    return lines


def _attribution(steps: dict[str, Any], http: dict[str, Any]) -> list[str]:
    """The client-observed mean at concurrency 1 split into serial parts: embedding and vector
    query from the server's own histograms of the same HTTP run when it has them (in-process
    timings otherwise), ranking from the in-process timings, the rest of the server's tool
    time, and transport (client − tool). The counter read overlaps the embedding, so it is not
    a part of its own; whatever of it is not hidden lands in the rest."""
    tool = http["server_tool_mean_ms"]
    if tool is None:
        return []
    embed = http.get("server_embed_mean_ms") or steps["embed"]["mean_ms"]
    query = http.get("server_vector_query_mean_ms") or steps["vector_query"]["mean_ms"]
    parts = [
        ("embedding", embed),
        ("vector query", query),
        ("ranking + rendering", steps["rank"]["mean_ms"] + steps["render"]["mean_ms"]),
    ]
    inside = sum(ms for _, ms in parts)
    parts.append(
        ("rest of the tool call in the server (tool mean − the steps above)", tool - inside)
    )
    parts.append(
        ("transport: MCP client, HTTP, MCP server framing (client − tool)", http["mean_ms"] - tool)
    )
    total = http["mean_ms"]
    lines = [
        "Approximate attribution of the client-observed mean (embedding and vector query from "
        "the server's histograms of the HTTP run, ranking in-process; the counter read runs "
        "beside the embedding and is not a part of its own):",
        "",
        "| part | ms | share |",
        "|---|---|---|",
    ]
    for label, ms in sorted(parts, key=lambda p: -p[1]):
        lines.append(f"| {label} | {ms:.2f} | {100 * ms / total:.0f}% |")
    return [*lines, f"| client-observed mean | {total:.2f} | 100% |", ""]


def _locomo_lines(locomo: dict[str, Any]) -> list[str]:
    ev = locomo["evidence"]
    lines = [
        "## Retrieval quality: LoCoMo",
        "",
        f"{locomo['conversations']} conversations, one tenant each; {locomo['turns']:,} turns "
        f'remembered over HTTP as "speaker: text" → {locomo["memories"]:,} memories '
        f'({locomo["already_known"]} answered "already known", their turns mapped to the '
        f"existing id). {ev['questions_categories_1_4']:,} questions of categories 1–4; "
        f"{ev['empty_evidence_excluded']} with no usable evidence are excluded; "
        f"{ev['malformed_evidence']} with malformed evidence strings are parsed (split on "
        f"';'/spaces, 'D:11:26' read as D11:26, tokens naming no turn dropped: "
        f"{ev['evidence_tokens_dropped']}) and kept ({ev['malformed_evidence_kept']}); "
        f"{ev['questions_scored']:,} questions scored. Turn-level R@k = the fraction of a "
        "question's evidence turns among the turns behind the first k returned ids, averaged. "
        "Each configuration asks every question against its own copy of the stored tenants, "
        "so accesses one configuration records never rank another's answers.",
        "",
        "| retrieval | R@1 | R@5 | R@10 | mean returned | answers HIGH / MEDIUM / none |",
        "|---|---|---|---|---|---|",
    ]
    cos = locomo["plain_cosine"]["all"]
    lines.append(
        f"| plain cosine top-10 (VectorStore.query) | {cos['R@1']:.3f} | {cos['R@5']:.3f} | "
        f"{cos['R@10']:.3f} | 10 | — |"
    )
    if "fused_order" in locomo:
        fused = locomo["fused_order"]["all"]
        lines.append(
            f"| fused relevance top-10 (both legs, no gates, no tie-break) | "
            f"{fused['R@1']:.3f} | {fused['R@5']:.3f} | {fused['R@10']:.3f} | 10 | — |"
        )
    for name, result in locomo["modes"].items():
        a = result["all"]
        conf = a["confidence"]
        none = conf.get("no_match", 0) + conf.get("not_confident", 0)
        lines.append(
            f"| recall {name} | {a['R@1']:.3f} | {a['R@5']:.3f} | {a['R@10']:.3f} | "
            f"{a['mean_returned']:.2f} | {conf.get('high', 0)} / {conf.get('medium', 0)} / "
            f"{none} |"
        )
    lines += ["", "Per category (R@5 / R@10):", ""]
    categories = list(locomo["plain_cosine"]["by_category"])
    lines.append("| retrieval | " + " | ".join(categories) + " |")
    lines.append("|---|" + "---|" * len(categories))

    def cells(by_category: dict[str, Any]) -> str:
        out = []
        for c in categories:
            s = by_category[c]
            out.append(f"{s['R@5']:.3f} / {s['R@10']:.3f}" if s["questions"] else "—")
        return " | ".join(out)

    counts = " | ".join(
        str(locomo["plain_cosine"]["by_category"][c]["questions"]) for c in categories
    )
    lines.append(f"| questions | {counts} |")
    lines.append(f"| plain cosine | {cells(locomo['plain_cosine']['by_category'])} |")
    if "fused_order" in locomo:
        lines.append(f"| fused relevance | {cells(locomo['fused_order']['by_category'])} |")
    for name, result in locomo["modes"].items():
        lines.append(f"| recall {name} | {cells(result['by_category'])} |")
    return [*lines, ""]


def _beam_lines(beam: dict[str, Any]) -> list[str]:
    ev = beam["evidence"]
    lines = [
        "## Retrieval quality: long technical chats (BEAM 500K dev)",
        "",
        f"{beam['chats']} chats of coding projects and mathematics courses, one tenant each; "
        f'{beam["messages"]:,} messages remembered over HTTP as "role: content" in order → '
        f'{beam["memories"]:,} memories ({beam["already_known"]} answered "already known", '
        f"their messages mapped to the existing id; {beam['truncated']} longer than the "
        f"{beam['content_limit_bytes']:,}-byte content limit cut to it). {ev['questions']} "
        f"questions: {ev['with_evidence']} with evidence messages are scored, "
        f"{ev['abstention']} abstention questions ask about something never discussed. "
        "Message-level R@k = the fraction of a question's evidence messages among the messages "
        "behind the first k returned ids, averaged; shown only where the limit is at least k. "
        "Each configuration asks every question against its own copy of the stored tenants, "
        "so accesses one configuration records never rank another's answers.",
        "",
        "| retrieval | R@1 | R@5 | R@10 | mean returned | answers HIGH / MEDIUM / LOW / none |",
        "|---|---|---|---|---|---|",
    ]
    for label, key in (
        ("plain cosine top-10 (VectorStore.query)", "plain_cosine"),
        ("fused relevance top-10 (both legs, no gates, no tie-break)", "fused_order"),
    ):
        a = beam[key]["all"]
        lines.append(
            f"| {label} | {_fmt(a['R@1'], 3)} | {_fmt(a['R@5'], 3)} | {_fmt(a['R@10'], 3)} | "
            "10 | — |"
        )
    for name, result in beam["modes"].items():
        a = result["all"]
        lines.append(
            f"| recall {name} | {_fmt(a['R@1'], 3)} | {_fmt(a['R@5'], 3)} | "
            f"{_fmt(a['R@10'], 3)} | {_fmt(a['mean_returned'], 2)} | "
            f"{_levels(a['confidence'])} |"
        )
    return [*lines, "", *_beam_answer_lines(beam), *_beam_kind_lines(beam)]


def _levels(confidence: dict[str, int]) -> str:
    """Answers HIGH / MEDIUM / LOW / with nothing confident (no match, or all gated)."""
    none = confidence.get("no_match", 0) + confidence.get("not_confident", 0)
    shown = [confidence.get(level, 0) for level in ("high", "medium", "low")]
    return " / ".join(str(n) for n in [*shown, none])


def _beam_answer_lines(beam: dict[str, Any]) -> list[str]:
    """Confidence, knowledge updates and answer size per configuration."""
    ev = beam["evidence"]
    lines = [
        f"HIGH precision: of the questions with evidence answered HIGH, those whose first "
        f"result stands for an evidence message. Abstentions: the {ev['abstention']} questions "
        "about something never discussed, by the confidence they came back with (none should "
        f"be HIGH). Update above original: of the {ev['updates_scored']} knowledge-update "
        "questions scored, those where the first updating message ranks above the first "
        "original one in the returned list (a message not returned ranks below every returned "
        "one; neither returned is not first); "
        f"{ev['updates_with_original_and_updated']} name both messages, "
        f"{ev['updates_skipped_same_messages']} naming the same message for both skipped. "
        "Answer size: characters of the recall text, tokens estimated as characters ÷ 4, over "
        "every question asked.",
        "",
        "| recall | HIGH with evidence first | abstentions HIGH / MEDIUM / LOW / none | "
        "update above original | mean answer chars | ≈ tokens |",
        "|---|---|---|---|---|---|",
    ]
    for name, result in beam["modes"].items():
        precise = result["high_precision"]
        abstained = result["abstention"]
        updates = result["updates"]
        shown = (
            f"{updates['update_first']} of {updates['scored']} "
            f"({updates['update_first'] / updates['scored']:.2f})"
            if updates["scored"]
            else "—"
        )
        size = result["answer_size"]
        lines.append(
            f"| {name} | {precise['evidence_first']} of {precise['high']} | "
            f"{_levels(abstained['confidence'])} of {abstained['questions']} | {shown} | "
            f"{size['mean_chars']:,.0f} | {size['mean_tokens_est']:,.0f} |"
        )
    return [*lines, ""]


def _beam_kind_lines(beam: dict[str, Any]) -> list[str]:
    default = next(
        (r for n, r in beam["modes"].items() if n.startswith("balanced/") and "default" in n),
        None,
    )
    if default is None:
        return []
    lines = [
        "R@5 per question kind:",
        "",
        "| kind | questions | plain cosine | fused relevance | recall balanced (default) |",
        "|---|---|---|---|---|",
    ]
    for kind, s in beam["plain_cosine"]["by_kind"].items():
        fused = beam["fused_order"]["by_kind"][kind]
        recall = default["by_kind"].get(kind, {}).get("R@5")
        lines.append(
            f"| {kind.replace('_', ' ')} | {s['questions']} | {_fmt(s['R@5'], 3)} | "
            f"{_fmt(fused['R@5'], 3)} | {_fmt(recall, 3)} |"
        )
    return [*lines, ""]


def _tech_lines(tech: dict[str, Any]) -> list[str]:
    lines = [
        "## Retrieval quality: long technical notes",
        "",
        f"{tech['notes']} notes written for this benchmark (`bench/data/`: coding-project "
        "messages of 1,700–3,500 characters, several per fictional project so that notes of one "
        "project compete), remembered over HTTP in one tenant (copied per configuration). "
        "Ordinary questions are phrased as a developer would ask; hard ones share no "
        "distinctive word with their note, where BM25 alone is weaker than cosine. "
        "R@k = the share of a question's answering notes among the first k returned.",
        "",
        "| retrieval | ordinary R@1 | R@5 | R@10 | hard R@1 | R@5 | R@10 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, kinds in tech["retrieval"].items():
        o, h = kinds["ordinary"], kinds["hard"]
        lines.append(
            f"| {name} | {_fmt(o['R@1'], 3)} | {_fmt(o['R@5'], 3)} | {_fmt(o['R@10'], 3)} | "
            f"{_fmt(h['R@1'], 3)} | {_fmt(h['R@5'], 3)} | {_fmt(h['R@10'], 3)} |"
        )
    questions = next(iter(tech["retrieval"].values()))
    lines += [
        "",
        f"Questions: {questions['ordinary']['questions']} ordinary, "
        f"{questions['hard']['questions']} hard.",
        "",
    ]
    return lines


def _devbench_lines(devbench: dict[str, Any]) -> list[str]:
    categories = [c for c in devbench["queries"] if c != "negative"]
    lines = [
        "## Retrieval quality: DevBench",
        "",
        f"{devbench['memories']} memories remembered over HTTP in one tenant (copied per mode), "
        f"queries: {', '.join(f'{c} {n}' for c, n in devbench['queries'].items())}. Hit = an "
        "expected memory among what recall returned (mode's default limit); negatives count "
        "answers that came back HIGH or MEDIUM confidence although nothing relevant is stored.",
        "",
        "| retrieval | "
        + " | ".join(f"{c} hit (top-1)" for c in categories)
        + " | negatives wrongly HIGH / MEDIUM |",
        "|---|" + "---|" * (len(categories) + 1),
    ]
    cos = devbench["plain_cosine_top5"]
    lines.append(
        "| plain cosine top-5 | "
        + " | ".join(f"{cos[c]['hit_rate']:.2f}" for c in categories)
        + " | — |"
    )
    for mode, s in devbench["modes"].items():
        neg = s["negative"]
        lines.append(
            f"| recall {mode} | "
            + " | ".join(
                f"{s[c]['hit_rate']:.2f} ({s[c]['top1_hit_rate']:.2f})" for c in categories
            )
            + f" | {neg['high']} / {neg['medium']} of {neg['queries']} |"
        )
    return [*lines, ""]


def _cold_lines(cold: dict[str, Any]) -> list[str]:
    lines = [
        "## Cold start (`mcp-memory-api --local`, spawn to GET /health 200)",
        "",
        "| data dir | runs (s) | median s | boot parts (ms, last run) | peak RSS MiB |",
        "|---|---|---|---|---|",
    ]
    for label, key in (("empty (initdb)", "empty_dir"), ("existing", "existing_dir")):
        runs = cold[key]["runs"]
        parts = ", ".join(f"{k} {v}" for k, v in runs[-1]["parts_ms"].items())
        lines.append(
            f"| {label} | {', '.join(str(r['health_s']) for r in runs)} | "
            f"{cold[key]['median_s']:.2f} | {parts} | {runs[-1]['peak_rss_mib']} |"
        )
    return [*lines, ""]


def _first_answer_lines(first: dict[str, Any]) -> list[str]:
    lines = [
        "## First answer over stdio (spawn, initialize, tools/list, one recall answered)",
        "",
        f"The official MCP client spawns the server on a data dir holding {first['memories']} "
        "memories. Cold: no database or resident running; warm: the database and the resident the "
        "previous process left running, 3 s after it left.",
        "",
        "| server | initialize s | tools/list s | first recall s | runs (first recall) |",
        "|---|---|---|---|---|",
    ]
    rows = [("ours, cold", first["cold"]), ("ours, warm", first["warm"])]
    if "peer" in first:
        rows.append((first["peer"]["name"], first["peer"]))
    for label, row in rows:
        runs = ", ".join(str(r["first_recall_s"]) for r in row["runs"])
        lines.append(
            f"| {label} | {row['median_initialize_s']:.2f} | {row['median_tools_list_s']:.2f} | "
            f"{row['median_first_recall_s']:.2f} | {runs} |"
        )
    if "peer" in first:
        lines += [
            "",
            f"Ours over the peer's first recall: cold {first['ratio_cold']}×, warm "
            f"{first['ratio_warm']}×.",
        ]
    return [*lines, ""]


def _counter_lines(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "## Counter read cost against shard backlog",
        "",
        "A cold counter read (merged.json, the shard listing, every unfolded shard body; what a "
        "recall pays once the 60 s per-tenant cache expires), shards of 10 memory deltas "
        "written by bench/bench_counters.py's `write_shards`:",
        "",
        "| unfolded shards | p50 ms | p95 ms |",
        "|---|---|---|",
    ]
    lines += [f"| {r['shards']} | {r['p50_ms']} | {r['p95_ms']} |" for r in rows]
    return [*lines, ""]


PLACEHOLDERS = (
    "`DATA` is the folder the data sets are read from and `OUT` the one the results are written "
    'to ([development.md](development.md), "Benchmarks").'
)


def public_command(command: str) -> str:
    """The command as a reader runs it: where this machine keeps the data sets and the results is
    nobody else's business, so ``--data`` and ``--out`` name their roles, not the paths."""
    return re.sub(
        r"(--data|--out)(=|\s+)(\S+)",
        lambda match: f"{match.group(1)} {'DATA' if match.group(1) == '--data' else 'OUT'}",
        command,
    )


def summary(results: dict[str, Any], *, plot_ref: str | None) -> str:
    m = results["machine"]
    load = results["load"]
    lines = [
        "# Benchmarks",
        "",
        f"Written by `{public_command(results['command'])}` "
        f"(commit {results.get('commit') or 'unknown'}, "
        f"{results['started_at']}, {results['duration_s'] / 60:.0f} min"
        + (", **smoke sizes**" if results["smoke"] else "")
        + ")."
        + (f" {PLACEHOLDERS}" if public_command(results["command"]) != results["command"] else ""),
        "",
        f"Machine: {m['cpu_model']}, {m['cores']} cores, {m['ram_gib']} GiB RAM, Python "
        f"{m['python']}, Linux {m['kernel']}. Embedded PostgreSQL (pgserver) and the local "
        "all-MiniLM-L6-v2 int8 model. Load average (1/5/15 min) at start "
        f"{' / '.join(f'{x:.2f}' for x in load['start'])}, at end "
        f"{' / '.join(f'{x:.2f}' for x in load['end'])}: other work on the machine shares the "
        "cores, so latencies are upper bounds of an idle machine's.",
        "",
    ]
    speed = results.get("speed")
    if speed:
        lines += _headline(speed, results.get("speed_runs", []))
        lines += _speed_lines(speed, plot_ref)
        if speed.get("breakdown"):
            lines += _breakdown_lines(speed["breakdown"])
    for key, section in _SECTIONS[:2]:
        if results.get(key):
            lines += section(results[key])
    lines += _quality_targets(results)
    for key, section in _SECTIONS[2:]:
        if results.get(key):
            lines += section(results[key])
    return "\n".join(lines).rstrip() + "\n"


def _verdict(met: bool) -> str:
    return "met" if met else "**missed**"


def _quality_targets(results: dict[str, Any]) -> list[str]:
    """Issue 15's retrieval targets, each against the figure this page reports."""
    rows: list[tuple[str, str, bool]] = []
    locomo = results.get("locomo")
    if locomo and "fused_order" in locomo:
        modes = locomo["modes"]
        default = modes.get("balanced/5 (default)", {}).get("all")
        wide = modes.get("exploratory/10 (default)", {}).get("all")
        fused = locomo["fused_order"]["all"]
        if default:
            rows.append(
                (
                    "LoCoMo default recall R@5 ≥ 0.55",
                    f"{default['R@5']:.3f}",
                    default["R@5"] >= 0.55,
                )
            )
            gap = fused["R@5"] - default["R@5"]
            rows.append(
                (
                    "LoCoMo default R@5 at most 0.01 below the fused order's",
                    f"{default['R@5']:.3f} vs {fused['R@5']:.3f} ({gap:+.3f})",
                    gap <= 0.01,
                )
            )
        if wide:
            rows.append(
                ("LoCoMo exploratory/10 R@10 ≥ 0.65", f"{wide['R@10']:.3f}", wide["R@10"] >= 0.65)
            )
    if results.get("beam"):
        rows += _beam_targets(results["beam"])
    tech = results.get("technotes")
    if tech:
        cosine = tech["retrieval"]["plain cosine top-10"]
        default = tech["retrieval"].get("recall balanced/5 (default)")
        if default:
            for kind in ("ordinary", "hard"):
                rows.append(
                    (
                        f"technical notes ({kind}): default R@5 ≥ plain cosine's",
                        f"{default[kind]['R@5']:.3f} vs {cosine[kind]['R@5']:.3f}",
                        default[kind]["R@5"] >= cosine[kind]["R@5"],
                    )
                )
    dev = results.get("devbench")
    if dev:
        exact = dev["modes"]["balanced"]["exact"]["top1_hit_rate"]
        rows.append(
            ("DevBench exact queries hit@1 = 1.0 (default mode)", f"{exact:.2f}", exact >= 1.0)
        )
        high = sum(m["negative"]["high"] for m in dev["modes"].values())
        rows.append(("DevBench negatives: 0 HIGH (all modes)", str(high), high == 0))
    probe = results.get("probe")
    if probe:
        for backend in ("postgres", "s3"):
            found = probe[backend]["found_in_top_3"]
            rows.append(
                (
                    f"keyword probe on {backend}: ≥ 48 of 50 in the top 3",
                    f"{found} of {probe[backend]['planted']}",
                    found >= 48,
                )
            )
    if not rows:
        return []
    return ["## Retrieval targets", "", *_targets_table(rows), ""]


def _beam_targets(beam: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """The long chats beside LoCoMo and the notes: the default recall's R@5 and the
    exploratory default's R@10 against plain cosine's, and R@5 against the fused order's."""
    modes = beam["modes"]
    default = modes.get("balanced/5 (default)", {}).get("all")
    wide = modes.get("exploratory/10 (default)", {}).get("all")
    cosine, fused = beam["plain_cosine"]["all"], beam["fused_order"]["all"]
    rows: list[tuple[str, str, bool]] = []
    if default and default["R@5"] is not None:
        gap = fused["R@5"] - default["R@5"]
        rows += [
            (
                "BEAM dev default R@5 ≥ plain cosine's",
                f"{default['R@5']:.3f} vs {cosine['R@5']:.3f}",
                default["R@5"] >= cosine["R@5"],
            ),
            (
                "BEAM dev default R@5 at most 0.01 below the fused order's",
                f"{default['R@5']:.3f} vs {fused['R@5']:.3f} ({gap:+.3f})",
                gap <= 0.01,
            ),
        ]
    if wide and wide["R@10"] is not None:
        rows.append(
            (
                "BEAM dev exploratory/10 R@10 ≥ plain cosine's",
                f"{wide['R@10']:.3f} vs {cosine['R@10']:.3f}",
                wide["R@10"] >= cosine["R@10"],
            )
        )
    return rows


def _targets_table(rows: list[tuple[str, str, bool]]) -> list[str]:
    """Each target, what this page measured, and whether it was met."""
    lines = ["| target | measured | |", "|---|---|---|"]
    return lines + [f"| {name} | {value} | {_verdict(met)} |" for name, value, met in rows]


def _sweep_lines(sweep: dict[str, Any]) -> list[str]:
    families = list(sweep["families"])
    lines = [
        "## Fusion sweep: every method on recall's own candidates",
        "",
        "`python bench/sweep_fusion.py` (also the `sweep` stage): the vector's nearest 100 and "
        "the keyword leg's best 100, tokenised and scored by the keyword leg itself, ordered by "
        "each method with no gates and no tie-break. z-score fusion is recall's: cosine + weight "
        "× floor × BM25 ⁄ spread. devbench counts hit@1 / hit@5; the others R@5 / R@10.",
        "",
        "| method | " + " | ".join(families) + " |",
        "|---|" + "---|" * len(families),
    ]
    for method, cells in sweep["methods"].items():
        lines.append(f"| {method} | " + " | ".join(f"{a:.3f} / {b:.3f}" for a, b in cells) + " |")
    counts = ", ".join(f"{f} {n}" for f, n in sweep["families"].items())
    return [*lines, "", f"Questions: {counts}.", ""]


def _soak_lines(soak: dict[str, Any]) -> list[str]:
    growth = soak["rss_growth_last_third"]
    fitted = "rss_growth_last_third_endpoints" in soak  # results before the fit had only this
    how = (
        "read from a least-squares line through its samples"
        if fitted
        else "from its first sample to its last"
    )
    endpoints = (
        f"; first to last sample of that third: "
        f"{soak['rss_growth_last_third_endpoints'] * 100:+.1f} %"
        if fitted
        else ""
    )
    known = (
        f' ({soak["already_known"]:,} remembers answered "already known", so not forgotten)'
        if "already_known" in soak
        else ""
    )
    lines = [
        "## Soak: mixed load over time",
        "",
        f"{soak['concurrency']} clients for {soak['duration_s'] / 60:.0f} min on "
        f"{soak['memories']:,} memories, over MCP: 70 % recall, 10 % remember then forget of the "
        "same memory (the store stays at its size, so growth is a leak and not data), 10 % "
        f"list_memories, 10 % memory_stats; the API's RSS sampled "
        f"{soak.get('rss_samples', len(soak['rss']))} times. "
        f"Calls: {', '.join(f'{n:,} {t}' for t, n in soak['calls'].items())}{known}; errors: "
        f"{soak['errors']}. RSS growth over the last third of the run, {how}: "
        f"{growth * 100:+.1f} % ({'met' if growth <= 0.02 else '**missed**'}: at most 2 %)"
        f"{endpoints}.",
        "",
        "| tool | p50 ms | p95 ms | p99 ms | p99.9 ms | max ms |",
        "|---|---|---|---|---|---|",
    ]
    for tool, p in soak["latency_ms"].items():
        if p:
            lines.append(
                f"| {tool} | {p['p50']} | {p['p95']} | {p['p99']} | {p['p99.9']} | {p['max']} |"
            )
    series = ", ".join(f"{s['rss_mib']:.0f}" for s in soak["rss"])
    shown = "every tenth sample" if "rss_samples" in soak else "each sample"
    return [*lines, "", f"RSS (MiB) at {shown}: {series}.", ""]


def _probe_lines(probe: dict[str, Any]) -> list[str]:
    lines = [
        "## Keyword probe: identifiers among look-alikes",
        "",
        f"{probe['distractors']:,} developer notes of five shapes (error codes, file paths, "
        "flags, versions, ticket ids; `bench/_probe.py`) and 50 planted ones, ten of each "
        "shape, each asked for by its identifier alone in a default recall. PostgreSQL: over "
        "MCP, the distractors preloaded as 0.9.0 wrote them (vector and index key, no lexicon), "
        "so the API's first recall backfills the tenant's lexicon. S3: moto and the S3 Vectors "
        "fake, through the same MemoryService.",
        "",
        "| backend | in the top 3 | first | HIGH (of which first) | by shape: code / path / "
        "flag / version / ticket | seconds for 50 recalls |",
        "|---|---|---|---|---|---|",
    ]
    for backend in ("postgres", "s3"):
        b = probe[backend]
        kinds = " / ".join(str(v) for v in b["by_kind"].values())
        high = b["confidence"].get("high", 0)
        lines.append(
            f"| {backend} | {b['found_in_top_3']} of {b['planted']} | {b.get('found_first', '—')} "
            f"| {high} ({b.get('high_and_first', '—')}) | {kinds} | {b['seconds']} |"
        )
    return [*lines, ""]


def _revision_lines(revisions: dict[str, Any]) -> list[str]:
    """Issue 17: corrected facts, with and without ``replaces``, and what the records cost."""
    with_, without = revisions["with_replaces"], revisions["without_replaces"]
    latency = revisions["latency"]
    pairs = with_["pairs"]
    rows = [
        (
            f"with replaces: the revision returned, the old fact never ({pairs} of {pairs})",
            f"{with_['revision_returned']} returned, old {with_['old_returned']} times",
            with_["revision_returned"] == pairs and with_["old_returned"] == 0,
        ),
        (
            "without replaces: the revision ranks above the old fact in ≥ 45 of 50",
            f"{without['revision_above_old']} of {without['pairs']}",
            without["revision_above_old"] >= 45,
        ),
    ]
    lines = [
        "## Corrections and expiry",
        "",
        f"{pairs} (old fact, revised fact) pairs from coding-project chats "
        "(`bench/data/revisions.json`) among "
        f"{with_['memories']:,} memories (technical notes, DevBench, LoCoMo turns), each pair "
        "remembered over MCP, old first, then each pair's question asked in a default recall "
        "(`bench/_revisions.py`).",
        "",
        *_targets_table(rows),
    ]
    lines += [
        "",
        f"Without replaces, remember linked the revision to the old memory as its probable "
        f"update for {without['link_named_old']} of {without['pairs']} revisions, and linked "
        f"{without['link_on_first_store']} old facts to a filler when they were first stored.",
        "",
        f"Recall p50 over MCP at {latency['memories']:,} memories (concurrency 1, "
        f"{latency['rounds']} alternating rounds of {latency['calls_per_round']} LoCoMo "
        f"questions): {latency['plain_p50_median_ms']} ms on a plain tenant, "
        f"{latency['marked_p50_median_ms']} ms on one that also holds "
        f"{latency['replacement_records']:,} replacement records and "
        f"{latency['expiring_memories']:,} expiring memories (ratio {latency['ratio']}; "
        "rounds: "
        + ", ".join(
            f"{a} / {b}"
            for a, b in zip(latency["plain_p50_ms"], latency["marked_p50_ms"], strict=True)
        )
        + " ms).",
        "",
    ]
    return lines


def _multiproc_lines(multi: dict[str, Any]) -> list[str]:
    """Issue 19: three writing API processes on one PostgreSQL against one process alone."""
    one, three = multi["one_process"], multi["three_processes"]
    share = three["sql_scan_share"]
    rows = [
        (
            "recall p95 with 3 writing processes ≤ 1.3 × one process",
            f"{three['recall_p95_ms']} vs {one['recall_p95_ms']} ms (× {multi['p95_ratio']})",
            multi["p95_ratio"] <= 1.3,
        ),
        (
            "recall mean with 3 writing processes ≤ 1.3 × one process",
            f"{three['recall_mean_ms']} vs {one['recall_mean_ms']} ms (× {multi['mean_ratio']})",
            multi["mean_ratio"] <= 1.3,
        ),
        (
            "share of vector queries (recalls and remember's dedup) scanned in SQL < 5 %",
            "—"
            if share is None
            else f"{100 * share:.2f} % ({three['sql_scans']} of "
            f"{three['sql_scans'] + three['snapshot_answers']})",
            share is not None and share < 0.05,
        ),
    ]
    lines = [
        "## Several API processes on one PostgreSQL",
        "",
        f"Three API processes and the compactor on one embedded PostgreSQL, "
        f"{multi['memories']:,} memories in one tenant; each process recalls (concurrency 2) "
        "and remembers (concurrency 1, a quarter as many calls) on it at once. Beside it, the "
        "same load on one process alone (concurrency 6 and 3). `bench/_multiproc.py`.",
        "",
        *_targets_table(rows),
    ]
    lines += [
        "",
        f"Recall p50: {three['recall_p50_ms']} ms with three processes, {one['recall_p50_ms']} "
        f"ms with one. One process alone scanned {one['sql_scans']} vector queries in SQL of "
        f"{one['sql_scans'] + one['snapshot_answers']}. The compactor's shard backlog at the "
        f"end: {multi['compactor_backlog_shards']}.",
        "",
    ]
    return lines


def update_lines(updates: dict[str, Any]) -> list[str]:
    """The ``updates`` stage (bench/_updates.py): newer above older, and false links."""
    lines = [
        "## Probable updates",
        "",
        "Each pair in a fresh tenant among eight other facts, older first, over MCP; then the "
        "pair's question in a default recall (`bench/_updates.py`; generated pairs from "
        "`bench/supersede_pairs.py`, long ones inside paragraphs of unrelated sentences). "
        '"everyday alone": the everyday pairs with no other fact, as a fresh project; "chat": '
        "chat messages of software projects and a mathematics course that give a figure anew "
        "(`bench/data/chat_revisions.json`).",
        "",
        "| set | updates | newer above older | linked | distractors | older above newer "
        "| false links |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, row in updates.items():
        lines.append(
            f"| {name} | {row['updates']} | {row['newer_first']} ({row['newer_first_rate']}) | "
            f"{row['linked']} | {row['distractors']} | {row.get('older_first', '–')} | "
            f"{row['false_links']} ({row['false_link_rate']}) |"
        )
    return [*lines, ""]


# Each stage's section, in page order; the retrieval targets go after the first two.
_SECTIONS: list[tuple[str, Callable[[Any], list[str]]]] = [
    ("cold_start", _cold_lines),
    ("first_answer", _first_answer_lines),
    ("counters", _counter_lines),
    ("locomo", _locomo_lines),
    ("beam", _beam_lines),
    ("sweep", _sweep_lines),
    ("technotes", _tech_lines),
    ("devbench", _devbench_lines),
    ("probe", _probe_lines),
    ("multiproc", _multiproc_lines),
    ("revisions", _revision_lines),
    ("updates", update_lines),
    ("soak", _soak_lines),
]


def target_row(speed: dict[str, Any]) -> dict[str, Any] | None:
    """The row the latency target is judged on: recall at 10,000 memories, concurrency 1."""
    target = next((s for s in speed["sizes"] if s["size"] == 10_000), None)
    if target is None:
        return None
    return next((r for r in target["recall"] if r["concurrency"] == 1), None)


def speed_run(results: dict[str, Any]) -> dict[str, Any] | None:
    """One run's target row with its commit, time and host-speed gauge, for the runs table."""
    row = target_row(results["speed"]) if results.get("speed") else None
    if row is None:
        return None
    return {
        "commit": results.get("commit") or "unknown",
        "started_at": results["started_at"],
        "p50_ms": row["p50_ms"],
        "p95_ms": row["p95_ms"],
        "client_cpu_ms": (row.get("cpu_ms_per_call") or {}).get("client"),
    }


def _met(row: dict[str, Any]) -> bool:
    return bool(row["p50_ms"] <= TARGET_P50_MS and row["p95_ms"] <= TARGET_P95_MS)


def _headline(speed: dict[str, Any], runs: list[dict[str, Any]]) -> list[str]:
    row = target_row(speed)
    if row is None:
        return []
    verdict = "met" if _met(row) else "**missed**"
    gauge = (row.get("cpu_ms_per_call") or {}).get("client")
    lines = [
        f"Target: recall p50 ≤ {TARGET_P50_MS:.0f} ms and p95 ≤ {TARGET_P95_MS:.0f} ms "
        f"at 10,000 memories, concurrency 1 — measured p50 {row['p50_ms']:.1f} ms, p95 "
        f"{row['p95_ms']:.1f} ms: {verdict}.",
        "",
    ]
    if gauge is not None:
        # The client does the same work in every run, so its CPU time shows how fast the
        # (shared) host was while this run measured; every other figure moves with it.
        lines += [
            f"Host speed gauge: the official MCP client's own CPU per call in that row was "
            f"{gauge:.2f} ms. It is the same work in every run, so it shows how fast the machine "
            "was at the time: on a shared host, compare it between runs before comparing their "
            "latencies, which move with it.",
            "",
        ]
    if len(runs) > 1:
        # One run on a shared host can land in a fast or a slow spell; every merged run is shown
        # so the verdict above is read beside the others, not instead of them.
        met = sum(_met(run) for run in runs)
        lines += [
            f"The same row in every speed run this page was merged from: the target was met in "
            f"{met} of {len(runs)} (the tables below are the last run's).",
            "",
            "| run started | commit | p50 ms | p95 ms | target | client CPU ms/call |",
            "|---|---|---|---|---|---|",
        ]
        for run in runs:
            cpu = run["client_cpu_ms"]
            lines.append(
                f"| {run['started_at']} | {run['commit']} | {run['p50_ms']:.1f} | "
                f"{run['p95_ms']:.1f} | {'met' if _met(run) else 'missed'} | "
                f"{'—' if cpu is None else f'{cpu:.2f}'} |"
            )
        lines.append("")
    return lines


__all__ = ["git_commit", "machine", "plot", "public_command", "speed_run", "summary", "target_row"]
