"""Exact names end to end: the official MCP client over HTTP against the real runtime, on
PostgreSQL and on S3 (moto and the S3 Vectors fake), with the local model.

A query that is an identifier (an error code, a ticket, a snake_case or dotted name, a path, a
flag, a version, an environment variable) asks for the memory that holds it whole. What the
ranking promises, and what is checked here through the tools a model actually calls:

- the memory holding the query's name is listed first, even among notes written from one
  template that differ only by their identifier, and even when a look-alike (E1024 for E1042,
  OPS-4821 for PAY-4821) is newer and on the same subject;
- the name is found wherever it stands in a memory up to 32,000 bytes (the keyword leg scores
  a memory by its best passage), above short notes that hold only its parts;
- confidence never claims what is not stored (no HIGH for E1042 when only E1024 is), and is
  HIGH for the one memory holding a name;
- a newer memory on the same subject (a revision with a changed number) comes first.
"""

from __future__ import annotations

from tests.api.test_recall_quality_e2e import recall
from tests.api.test_tools_e2e import (  # noqa: F401  (fixtures, registered by import)
    _tenant_per_test,
    call,
    ids_in,
    text_of,
)
from tests.api.test_tools_e2e import memory_url as memory_url  # the module's server fixture

MAX_CONTENT_BYTES = 32_000
LONG_NAME = "NGINX_PROXY_TIMEOUT_Q2000"

# One sentence, sixteen identifiers: the notes read alike and differ only by their name.
TEMPLATE = (
    "Checkout failed during the evening deploy because of {name}; the on-call engineer rolled "
    "back and opened a follow-up to alert on it before the next release."
)
# In the order they are stored: each look-alike after what it looks like, so it is the newer.
TEMPLATE_NAMES = [
    "E1042",  # an error code ...
    "E1024",  # ... and its newer look-alike, the same digits swapped
    "PAY-4821",  # a ticket ...
    "OPS-4821",  # ... and another project's ticket of the same number
    "order_sync_worker",  # snake_case
    "billing.retry.max_attempts",  # a dotted name
    "src/app/main.py",  # a path ...
    "src/app/worker.py",  # ... and its sibling
    "--drain-cache",  # a flag ...
    "--drain-queue",  # ... and one of the same word
    "2.14.3",  # a version ...
    "2.13.4",  # ... and one of the same numbers
    LONG_NAME,  # an environment variable
    "INC-3307",
    "payments.gateway.client",
    "KAFKA_CONSUMER_LAG_MAX",
]

# Short notes around the long memory, most of them holding parts of its name (or a name of the
# same shape): what a keyword match on "nginx", "proxy" or "timeout" alone would find.
SHORT_NOTES = [
    "The nginx ingress on the edge nodes terminates TLS and forwards to the app pool.",
    "Set NGINX_PROXY_TIMEOUT to 60 seconds on the staging edge; the default cut off exports.",
    "NGINX_PROXY_TIMEOUT_Q1000 was last quarter's upstream read timeout override; retired.",
    "The corporate proxy blocks outbound SSH; use the bastion host instead.",
    "The reporting role has a statement timeout of 15 seconds in PostgreSQL.",
    "The payment gateway client retries twice with a 5 second timeout before failing.",
    "The 'Edge latency' Grafana dashboard shows p99 upstream time per nginx worker.",
    "The release train leaves every Tuesday at 10:00 CET.",
    "The proxy_read_timeout directive in nginx.conf is overridden for websocket routes.",
    "Feature flags are served by Unleash; the SDK caches them for 15 seconds.",
]

E1024_NOTE = "E1024 means the Node cache is stale."

LOGIN_OLD = "The login API responds in 180ms under 20 concurrent requests."
LOGIN_NEW = (
    "The login API response time has decreased to 120ms under 20 concurrent requests after "
    "optimizing the auth flow."
)
LOGIN_QUERY = "What is the login API response time under 20 concurrent requests?"


async def remember(url: str, content: str) -> str:
    result = await call(url, "remember", {"content": content})
    assert not result.is_error, text_of(result)
    assert "nothing new was written" not in text_of(result), (content, text_of(result))
    return ids_in(text_of(result))[0]


async def remember_template_notes(url: str, names: list[str]) -> dict[str, str]:
    """Each name's note, stored in the order given: name -> memory id."""
    return {name: await remember(url, TEMPLATE.format(name=name)) for name in names}


def postmortem(ending: str) -> str:
    """A long, realistic incident write-up of nearly 30 KB that ends with ``ending``. It talks
    about nginx, the proxy and timeouts throughout, as such a write-up would, but never names
    the setting until its last sentence."""
    head = [
        "Postmortem: elevated 504 errors on the public edge",
        "",
        "Summary. For about three hours, a share of requests through the public edge returned "
        "504 Gateway Timeout. The nginx proxy tier waited on slow upstream responses from the "
        "report service until its read timeout expired, and retried requests piled up behind "
        "them. Customers saw failed exports and, later, slow page loads on the dashboard.",
        "",
        "Impact. Roughly 4 percent of edge requests failed at the peak; report exports failed "
        "for most large accounts; no data was lost. Support received 212 tickets.",
        "",
        "Timeline (UTC).",
    ]
    events = [
        "edge-{n:02d} logs its first burst of upstream timeouts from the report service",
        "the on-call engineer is paged by the 5xx-rate alert on the edge dashboard",
        "the proxy tier's p99 upstream time passes 30 seconds on edge-{n:02d}",
        "a rollback of the report service is started as a precaution",
        "the rollback finishes; timeouts continue, so the deploy is ruled out",
        "the database team reports a long-running export query holding locks",
        "the export query is cancelled and its worker restarted on node {n}",
        "connection counts on edge-{n:02d} climb as clients retry failed requests",
        "the incident channel is opened and a status page entry is posted",
        "nginx worker processes on edge-{n:02d} reach their connection limit",
        "keepalive connections to the upstream pool are drained and reopened",
        "the load balancer takes edge-{n:02d} out of rotation for a restart",
        "error rates fall below one percent for ten minutes, then rise again",
        "a second slow query pattern is found in the scheduled report batch",
        "the scheduled report batch is paused until the investigation ends",
        "customer support is briefed and a canned response is published",
    ]
    analysis = [
        "",
        "Root cause. The report service's export endpoint streamed its response only after the "
        "whole export was built. Under the batch load, building an export took longer than the "
        "proxy's read timeout, so the edge gave up, returned 504, and the client retried, "
        "which started another export behind the first. Each retry made the next one slower.",
        "",
        "Contributing factors. The read timeout was the same for every route, although exports "
        "are the only requests expected to run for minutes. The retry policy of the web client "
        "had no backoff. Dashboards showed upstream time per node, not per route, which hid "
        "that a single endpoint was slow.",
        "",
        "What went well. Paging worked within a minute; the rollback tooling was fast; the "
        "database team found the locking query quickly.",
        "",
        "Action items. Stream exports as they are built; add exponential backoff to the web "
        "client; add a per-route latency panel; review every proxy timeout on the edge.",
    ]
    lines = list(head)
    budget = 29_400 - len("\n".join(analysis).encode()) - len(ending.encode())
    minute = 0
    while len("\n".join(lines).encode()) < budget:
        event = events[minute % len(events)].format(n=minute % 24 + 1)
        lines.append(f"{minute // 60 + 14:02d}:{minute % 60:02d} - {event}.")
        minute += 1
    text = "\n".join([*lines, *analysis, "", ending])
    assert 28_000 < len(text.encode()) < MAX_CONTENT_BYTES, len(text.encode())
    return text


async def test_each_identifier_lists_its_own_note_first_among_notes_that_read_alike(
    memory_url: str,
) -> None:
    ids = await remember_template_notes(memory_url, TEMPLATE_NAMES)
    assert len(set(ids.values())) == len(TEMPLATE_NAMES), "every note is its own memory"
    misses = []
    for name in TEMPLATE_NAMES:
        text = await recall(memory_url, name)
        if ids_in(text)[:1] != [ids[name]]:
            misses.append(f"query {name!r}: expected {ids[name]} first\n{text}")
    assert not misses, "\n\n".join(misses)


async def test_a_name_at_the_end_of_a_30_kb_memory_ranks_above_notes_holding_its_parts(
    memory_url: str,
) -> None:
    long_text = postmortem(
        "Follow-up shipped: the edge now reads the per-route upstream read timeout from "
        f"{LONG_NAME}, set to 120 seconds for the export routes only."
    )
    assert long_text.count(LONG_NAME) == 1 and long_text.rstrip().endswith("only.")
    for note in SHORT_NOTES[:5]:
        await remember(memory_url, note)
    long_id = await remember(memory_url, long_text)
    for note in SHORT_NOTES[5:]:
        await remember(memory_url, note)
    text = await recall(memory_url, LONG_NAME)
    assert ids_in(text)[:1] == [long_id], (LONG_NAME, long_id, text)


async def test_confidence_is_never_high_for_a_name_not_stored_and_high_for_a_sole_one(
    memory_url: str,
) -> None:
    # A short note: its cosine to "E1042" reaches the HIGH line and stands clear of the rest,
    # so only the rule on names not stored keeps the answer below HIGH.
    await remember(memory_url, E1024_NOTE)
    ids = await remember_template_notes(
        memory_url, ["PAY-4821", "OPS-4821", "order_sync_worker", "--drain-cache"]
    )
    # E1042 is stored nowhere: its look-alike E1024 is no answer to it, however close.
    for query in ["E1042", "what does E1042 mean?"]:
        text = await recall(memory_url, query)
        assert "HIGH CONFIDENCE" not in text, (query, text)
    # PAY-4821 is held whole by one note (OPS-4821 holds only its number).
    text = await recall(memory_url, "PAY-4821")
    assert "HIGH CONFIDENCE" in text, ("PAY-4821", ids["PAY-4821"], text)
    assert ids_in(text)[:1] == [ids["PAY-4821"]], ("PAY-4821", ids["PAY-4821"], text)


async def test_an_update_is_listed_before_what_it_updates(memory_url: str) -> None:
    old = await remember(memory_url, LOGIN_OLD)
    await remember(memory_url, "The billing service exports invoices to S3 every night.")
    new = await remember(memory_url, LOGIN_NEW)
    assert old != new
    text = await recall(memory_url, LOGIN_QUERY)
    found = ids_in(text)
    assert old in found and new in found, (LOGIN_QUERY, old, new, text)
    assert found.index(new) < found.index(old), (LOGIN_QUERY, new, text)
