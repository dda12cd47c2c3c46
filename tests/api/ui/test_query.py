"""The state in the page's URL, read back exactly, and a correction's text held to remember's
rules."""

from __future__ import annotations

import pytest

from services.api.ui.actions import safe_next
from services.api.ui.query import PageState, corrected_content, page_state, page_url
from shared.errors import InvalidInputError

ID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"


def test_a_url_reads_back_as_the_state_it_was_written_from() -> None:
    state = PageState(
        tenant="acme",
        conversation="chat:1",
        memory_type="pattern",
        category="decision",
        tag="ops",
        notes_only=True,
        stored_after=1_767_225_600_000,  # 2026-01-01, a date alone in the URL
        stored_before=1_767_225_600_123,  # a time to the millisecond
        cursor="mAG6MDFB",
    )
    query = page_url(state).split("?", 1)[1]
    values = dict(pair.split("=", 1) for pair in query.split("&"))
    values["conversation"] = "chat:1"
    assert values["stored_after"] == "2026-01-01"
    values["stored_before"] = values["stored_before"].replace("%3A", ":")
    assert page_state(values) == state


def test_blank_fields_are_absent_and_search_settings_follow_a_search() -> None:
    state = page_state({"tenant": " acme ", "category": "", "tag": "  ", "mode": "precision"})
    assert state == PageState(tenant="acme", mode="precision")
    assert page_url(state) == "/ui?tenant=acme"
    assert state.result_limit == 3
    searched = page_state({"tenant": "acme", "q": "port", "mode": "precision", "limit": "7"})
    assert page_url(searched) == "/ui?tenant=acme&q=port&mode=precision&limit=7"


@pytest.mark.parametrize(
    ("values", "refusal"),
    [
        ({"mode": "fast"}, "`mode` must be one of precision, balanced or exploratory"),
        ({"confirm": "yes"}, "`confirm` must be `forget`"),
    ],
)
def test_a_value_outside_its_choices_is_refused_naming_them(
    values: dict[str, str], refusal: str
) -> None:
    with pytest.raises(InvalidInputError) as refused:
        page_state({"tenant": "acme", **values})
    assert str(refused.value).endswith(refusal), str(refused.value)


def test_a_correction_is_kept_as_typed_but_never_empty_or_oversized() -> None:
    assert corrected_content({"content": "  a\r\nb  "}) == "  a\nb  "
    for content, field in (("", "content"), ("\t\n", "content"), ("a\x00b", "content")):
        with pytest.raises(InvalidInputError) as refused:
            corrected_content({"content": content})
        assert refused.value.field == field
    with pytest.raises(InvalidInputError, match="at most 32000 bytes"):
        corrected_content({"content": "é" * 16_001})


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, "/ui"),
        ("/ui?tenant=acme&q=x", "/ui?tenant=acme&q=x"),
        ("https://evil.example/ui", "/ui"),
        ("//evil.example/ui", "/ui"),
        ("/mcp", "/ui"),
        ("javascript:alert(1)", "/ui"),
    ],
)
def test_after_signing_in_only_this_page_is_a_destination(raw: str | None, expected: str) -> None:
    assert safe_next(raw) == expected


@pytest.mark.parametrize(
    ("values", "refusal"),
    [
        ({"stored_after": "soon"}, "`stored_after` must be an ISO 8601 date"),
        (
            {"stored_after": "2026-02-01", "stored_before": "2026-01-01"},
            "`stored_after` must be earlier than `stored_before`",
        ),
        ({"cursor": "c" * 1025}, "`cursor` is longer than any cursor this page makes"),
    ],
)
def test_the_lists_dates_and_cursor_are_refused_by_name(
    values: dict[str, str], refusal: str
) -> None:
    with pytest.raises(InvalidInputError) as refused:
        page_state({"tenant": "acme", **values})
    assert str(refused.value).startswith(refusal), str(refused.value)
