"""The BM25 index over passages: a memory scores as its best passage, holds every term any of
its passages holds, and the query's names are counted per memory (pure, no I/O)."""

from __future__ import annotations

from shared.lexical import KeywordQuery, LexicalIndex, terms
from shared.lexical.segments import passage_counts
from shared.model.tokens import names

FILLER = "The deploy pipeline builds images, runs the suite and pushes tags to the registry. "


def index_of(memories: dict[str, str]) -> LexicalIndex:
    index = LexicalIndex()
    for memory_id, text in memories.items():
        index.add(memory_id, passage_counts(text))
    return index


def search(index: LexicalIndex, query: str) -> list[str]:
    result = KeywordQuery(index, terms(query), names=names(query)).result(top_k=10)
    return [hit.memory_id for hit in result.hits]


def test_words_close_together_beat_the_same_words_spread_over_a_long_memory() -> None:
    spread = " ".join(["redis eviction"] + [FILLER] * 30 + ["maxmemory policy"])
    together = "Redis eviction uses the maxmemory policy allkeys-lru."
    index = index_of({"spread": spread, "together": together, "other": FILLER})
    assert search(index, "redis eviction maxmemory policy")[:2] == ["together", "spread"]


def test_a_long_memory_holds_the_terms_of_every_passage() -> None:
    long = FILLER * 200 + "Finally set NGINX_PROXY_TIMEOUT_Q2000 to 75 seconds."
    assert len(long.encode()) > 16_000
    index = index_of({"long": long, "short": "nginx proxy timeout is 60 seconds"})
    query = "NGINX_PROXY_TIMEOUT_Q2000"
    hit = KeywordQuery(index, terms(query), names=names(query)).result(top_k=5).hits
    by_id = {h.memory_id: h for h in hit}
    assert "nginx_proxy_timeout_q2000" in by_id["long"].matched
    assert "nginx_proxy_timeout_q2000" not in by_id["short"].matched


def test_a_memory_is_counted_once_however_many_passages_hold_a_term() -> None:
    index = index_of({"long": "flaky " * 300, "short": "flaky test"})
    assert len(index) == 2
    assert index.passages == 1 + 300 // 64 + 1
    hits = KeywordQuery(index, terms("flaky")).result(top_k=5).hits
    assert sorted(h.memory_id for h in hits) == ["long", "short"]


def test_remove_drops_every_passage_of_a_memory() -> None:
    index = index_of({"long": FILLER * 40, "short": "the registry"})
    entries = index.entries
    index.remove("long")
    assert "long" not in index and len(index) == 1
    assert index.entries < entries
    assert search(index, "registry") == ["short"]
    index.remove("short")
    assert index.entries == 0 and index.passages == 0


def test_a_sole_holder_of_the_query_names_is_marked_and_counted() -> None:
    notes = {f"n{i}": f"Incident E10{i:02d}: the payment worker restarted." for i in range(20)}
    index = index_of(notes)
    query = "E1007"
    scored = KeywordQuery(index, terms(query), names=names(query))
    result = scored.result(top_k=20)
    assert result.names == 1 and scored.absent_names == 0
    held = [h for h in result.hits if h.names]
    assert [h.memory_id for h in held] == ["n7"] and held[0].sole


def test_a_name_no_memory_holds_is_absent_and_nothing_is_sole() -> None:
    index = index_of({"a": "Error E1024 means the cache is stale.", "b": "E1024 again"})
    query = "E1042"
    scored = KeywordQuery(index, terms(query), names=names(query))
    assert scored.absent_names == 1
    assert not any(h.sole for h in scored.result(top_k=5).hits)


def test_a_name_most_memories_hold_is_not_selective() -> None:
    memories = {f"m{i}": f"node.js service {i} restarts" for i in range(30)}
    memories["x"] = "the python worker"
    query = "node.js"
    result = KeywordQuery(index_of(memories), terms(query), names=names(query)).result(top_k=40)
    assert result.names == 0
    assert not any(h.names or h.sole for h in result.hits)


def scores(index: LexicalIndex, query: str) -> dict[str, float]:
    result = KeywordQuery(index, terms(query), names=names(query)).result(top_k=100)
    return {hit.memory_id: hit.score for hit in result.hits}


def test_an_index_after_removals_and_additions_scores_as_one_built_afresh() -> None:
    long = " ".join([FILLER] * 6 + ["redis eviction policy"])
    texts = {f"m{i}": f"redis cache {i} " + (long if i % 3 == 0 else FILLER) for i in range(12)}
    churned = index_of(texts)
    search(churned, "redis eviction")  # the terms' arrays are made, then changed under them
    for memory_id in ("m0", "m4", "m7"):
        churned.remove(memory_id)
    churned.add("m12", passage_counts("redis eviction " + long))
    churned.add("m13", passage_counts("a cache with no eviction"))
    survivors = {m: t for m, t in texts.items() if m not in {"m0", "m4", "m7"}}
    fresh = index_of(
        {**survivors, "m12": "redis eviction " + long, "m13": "a cache with no eviction"}
    )
    for query in ("redis eviction", "cache policy", "registry tags"):
        assert scores(churned, query) == scores(fresh, query)


def test_equal_scores_keep_the_order_the_memories_were_added_in() -> None:
    index = index_of({f"m{i}": "deploy cache" for i in range(5)} | {"x": "deploy"})
    assert search(index, "deploy cache") == ["m0", "m1", "m2", "m3", "m4", "x"]


def test_a_memorys_counts_are_kept_until_it_is_removed() -> None:
    index = LexicalIndex()
    index.add("m1", [{"deploy": 2, "cache": 1}, {"deploy": 1}])

    def counts(memory_id: str) -> dict[str, int]:
        ids, totals = index.counted(memory_id)
        return {index.term(i): n for i, n in zip(ids.tolist(), totals.tolist(), strict=True)}

    assert counts("absent") == {}
    assert counts("m1") == {"deploy": 3, "cache": 1}
    assert index.counted("m1") is index.counted("m1")
    index.remove("m1")
    assert counts("m1") == {}
    index.add("m1", [{"queue": 1}])
    assert counts("m1") == {"queue": 1}


def test_a_memorys_counts_are_summed_in_the_order_its_terms_were_first_met() -> None:
    index = LexicalIndex()
    index.add("one", [{"queue": 2, "deploy": 1}])
    index.add("many", [{"retry": 1, "queue": 1}, {"deploy": 2, "queue": 3}, {"retry": 4}])
    index.add("none", [])
    for memory_id, expected in (
        ("one", [("queue", 2), ("deploy", 1)]),
        ("many", [("retry", 5), ("queue", 4), ("deploy", 2)]),
        ("none", []),
    ):
        ids, totals = index.counted(memory_id)
        assert [index.term(i) for i in ids.tolist()] == [term for term, _ in expected]
        assert totals.tolist() == [count for _, count in expected]
