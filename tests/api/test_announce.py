"""What start-up tells a person, as pure functions: the banner's lines, the open-auth notice
worded for where the server runs, and which answer ``GET /`` gives by the Accept header."""

from __future__ import annotations

import logging
from pathlib import Path

import msgspec
import pytest

from services.api.announce import banner_lines, open_auth_notice, page_text, shown_host
from services.api.http.pointer import wants_html
from shared.config import Config, load_config

PG = {"DATABASE_URL": "postgresql://db/memory"}


def _local(**env: str) -> Config:
    return load_config(env, local=True, data_dir=Path("/data/mcp"))


def test_a_loopback_server_without_a_key_is_told_what_is_true_on_this_machine() -> None:
    level, detail = open_auth_notice(_local(), port=3000)
    assert level == logging.INFO
    assert "listens on 127.0.0.1 only" in detail
    assert "cluster" not in detail


def test_a_local_server_opened_to_the_network_is_warned_about_the_network() -> None:
    level, detail = open_auth_notice(_local(HOST="0.0.0.0"), port=3000)
    assert level == logging.WARNING
    assert "listens on 0.0.0.0: anyone on the network who reaches port 3000" in detail
    assert "cluster" not in detail


def test_a_cluster_server_keeps_the_cluster_wording() -> None:
    level, detail = open_auth_notice(load_config(PG), port=3000)
    assert level == logging.WARNING
    assert detail.startswith("MCP_API_KEY is unset: this server answers any caller")
    assert detail.endswith("from outside the cluster")


@pytest.mark.parametrize(
    ("addresses", "host"),
    [
        ([("127.0.0.1", 3000)], "127.0.0.1"),
        ([("0.0.0.0", 3000), ("::", 3000, 0, 0)], "127.0.0.1"),
        ([("::", 3000, 0, 0)], "[::1]"),
        ([("::1", 3000, 0, 0)], "[::1]"),
        ([("192.0.2.7", 3000)], "192.0.2.7"),
    ],
)
def test_the_banner_names_a_host_a_person_can_type(
    addresses: list[tuple[object, ...]], host: str
) -> None:
    assert shown_host(addresses) == host


def test_the_local_banner_says_where_to_connect_the_header_the_page_the_data_and_how_to_stop() -> (
    None
):
    config = _local()
    page = page_text(config, addresses=[("127.0.0.1", 43001)], has_page=True)
    lines = banner_lines(config, version="1.0.0", mcp_addresses=[("127.0.0.1", 43000)], page=page)
    text = "\n".join(lines)
    assert lines[0] == "mcp-memory 1.0.0 is ready."
    assert "http://127.0.0.1:43000/mcp" in text
    assert "X-Memory-Tenant: <your-project>" in text
    assert "memory page:   http://127.0.0.1:43001/ui" in text
    assert "data dir:      /data/mcp" in text
    assert "only this machine can connect" in text
    assert "Ctrl-C" in lines[-1] and "LOG_FORMAT=json" in lines[-1]
    assert len(lines) <= 8


def test_the_banner_says_why_there_is_no_page_and_names_the_key() -> None:
    config = load_config({**PG, "MCP_API_KEY": "k"})
    assert page_text(config, addresses=None, has_page=True).startswith("off: set UI_ENABLED=true")
    keyed = msgspec.structs.replace(
        config, server=msgspec.structs.replace(config.server, ui_enabled=True)
    )
    assert page_text(keyed, addresses=None, has_page=True).startswith("not served")
    lines = banner_lines(
        config,
        version="1.0.0",
        mcp_addresses=[("0.0.0.0", 3000)],
        page="off",
        boot_lines=("postgres (memories, objects) at postgresql://db/memory",),
    )
    text = "\n".join(lines)
    assert "Authorization: Bearer <MCP_API_KEY>" in text
    assert "every interface" in text
    assert "storage:       postgres (memories, objects)" in text
    assert "k" not in [word.strip(":") for word in text.split()]  # the key itself, never


@pytest.mark.parametrize(
    ("accept", "html"),
    [
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", True),  # a browser
        ("*/*", False),  # curl
        ("", False),
        ("application/json", False),
        ("application/json, text/event-stream", False),  # an MCP client
        ("text/html;q=0.5, application/json", False),
        ("application/json;q=0.2, text/html", True),
        ("text/html, application/json", False),  # a tie goes to JSON
        ("text/html;q=oops", False),
    ],
)
def test_get_root_answers_html_only_to_who_prefers_it(accept: str, html: bool) -> None:
    assert wants_html(accept) is html
