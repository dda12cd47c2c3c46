"""A memory's labels (category and tags) in the keyword leg: what they are indexed as, how much
they weigh, when a query is made of them, and that they travel through shards, folds and
removals like the passages (pure, no I/O)."""

from __future__ import annotations

from shared.lexical import KeywordHit, KeywordQuery, LexicalIndex, terms
from shared.lexical.segments import (
    FoldingLexicon,
    LexiconShard,
    MergedLexicon,
    absorb,
    apply,
    decode_for_fold,
    decode_merged,
    decode_shard,
    encode,
    label_terms,
    passage_counts,
)
from shared.lexical.tenant_index import build_tenant_lexicon
from shared.model import Memory
from shared.model.tokens import names

FILLER = "The deploy pipeline builds images, runs the suite and pushes tags to the registry. "


def memory(memory_id: str, content: str, category: str | None = None, *tags: str) -> Memory:
    return Memory(
        id=memory_id,
        tenant="t",
        content=content,
        category=category,
        tags=tags,
        created_at="2026-01-01T00:00:00.000Z",
    )


def index_of(*memories: Memory) -> LexicalIndex:
    index = LexicalIndex()
    shard = LexiconShard.of(memories)
    for memory_id, passages in shard.add.items():
        index.add(memory_id, passages, shard.labels.get(memory_id, ()))
    return index


def hits(index: LexicalIndex, query: str) -> dict[str, KeywordHit]:
    result = KeywordQuery(index, terms(query), names=names(query)).result(top_k=10)
    return {hit.memory_id: hit for hit in result.hits}


def test_labels_are_the_terms_of_the_category_and_tags_each_once() -> None:
    labelled = memory("a", "text", "Observability", "logging", "ci-cd", "observability")
    assert label_terms(labelled) == ["observ", "log", "ci-cd", "ci", "cd"]
    assert label_terms(memory("b", "text")) == []


def test_a_shard_carries_labels_only_for_the_memories_that_have_them() -> None:
    shard = LexiconShard.of([memory("a", "pgbouncer pools", "database"), memory("b", "lunch")])
    assert shard.labels == {"a": ["databas"]}
    assert shard.add["b"] == passage_counts("lunch")
    plain = encode(LexiconShard.of([memory("b", "lunch")]))
    assert "labels" not in plain  # a memory without labels is written as before
    assert decode_shard(encode(shard)) == shard


def test_a_label_the_text_never_says_finds_its_memory_and_marks_it_labelled() -> None:
    index = index_of(
        memory(
            "pool", "Postgres connections go through pgbouncer in transaction mode.", "database"
        ),
        memory("lunch", "Lunch is at noon on Fridays."),
    )
    found = hits(index, "database")
    assert list(found) == ["pool"]
    assert found["pool"].labelled


def test_labelled_means_every_query_term_is_a_label() -> None:
    index = index_of(memory("a", "pgbouncer pools connections", "database", "postgres"))
    assert hits(index, "postgres database")["a"].labelled
    assert hits(index, "what about the database?")["a"].labelled
    # "pools" is the memory's, but in its text, not its labels.
    assert not hits(index, "database pools")["a"].labelled


def test_a_label_weighs_what_one_more_mention_in_every_passage_would() -> None:
    long = FILLER * 12
    other = memory("b", "billing runs nightly")
    labelled = index_of(memory("a", long, "billing"), other)
    # The same words with "billing" written into each passage of the text instead.
    (bill,) = terms("billing")
    written = index_of(other)
    written.add("a", [{**p, bill: p.get(bill, 0) + 1} for p in passage_counts(long)])
    assert len(passage_counts(long)) > 1
    for query in ["billing", "registry billing", "deploy"]:
        assert hits(labelled, query)["a"].score == hits(written, query)["a"].score


def test_removing_a_memory_drops_its_labels() -> None:
    index = index_of(memory("a", "pgbouncer", "database"), memory("b", "lunch"))
    index.remove("a")
    assert index.labels("a") == frozenset()
    assert hits(index, "database") == {}
    assert index.entries == len(passage_counts("lunch")[0])


def test_labels_travel_through_apply_fold_and_a_removal() -> None:
    first = LexiconShard.of([memory("a", "pgbouncer", "database"), memory("b", "lunch", "food")])
    forgot = LexiconShard(remove=["b"])
    docs, labels = apply({}, {}, [first, forgot])
    assert set(docs) == {"a"} and labels == {"a": ["databas"]}
    folding = decode_for_fold(encode(FoldingLexicon()))
    assert folding is not None
    folded = absorb(folding, {"s1": first, "s2": forgot}, ["s1", "s2"])
    merged = decode_merged(encode(folded))
    assert merged is not None and merged.labels == {"a": ["databas"]}
    state = build_tenant_lexicon(merged.docs, merged.labels, merged.watermark, None)
    assert state.index.labels("a") == frozenset({"databas"})


def test_a_lexicon_written_before_labels_is_another_version_and_rebuilt() -> None:
    older = encode(MergedLexicon(docs={"a": passage_counts("pgbouncer")})).replace('"v":5', '"v":4')
    assert decode_merged(older) is None
    assert decode_shard('{"v":4,"add":{"a":[{"pgbouncer":1}]}}') is None
