"""The peer bench's arguments and its pooling of first asks over several long chats."""

from __future__ import annotations

import pytest

from bench.peer_http import parse, pooled_first_asks


def test_several_chats_are_read_from_one_argument() -> None:
    assert parse(["--beam-chat", "1,2,4"]).beam_chat == [1, 2, 4]
    assert parse([]).beam_chat == [1]


@pytest.mark.parametrize("value", ["1,x", "1,,2", "2,2"])
def test_a_list_of_chats_that_cannot_be_read_is_refused_by_name(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse(["--beam-chat", value])
    assert "--beam-chat" in capsys.readouterr().err


def test_first_asks_pool_every_chat_before_the_median() -> None:
    # Each chat's own medians are 2/4 and 10/20 ms (a ratio of 0.5 each); pooled, ours are
    # 1, 2, 3, 10, 11 (p50 3) and the peer's 4, 4, 4, 20, 21 (p50 4).
    firsts = [
        {"ours": [0.001, 0.002, 0.003], "peer": [0.004, 0.004, 0.004]},
        {"ours": [0.010, 0.011], "peer": [0.020, 0.021]},
    ]
    pooled = pooled_first_asks("beam chats 1,2 pooled", firsts)
    assert pooled["questions"] == 5
    assert pooled["ours"] == {"first_ask_p50_ms": 3.0}
    assert pooled["peer"] == {"first_ask_p50_ms": 4.0}
    assert pooled["ours/peer"] == {"first_ask": 0.75}
    assert "ours/baseline" not in pooled
