"""Where the memory page is served: on by default only where it needs no key, and never keyless
beyond this machine (UI_ENABLED, UI_PORT; see shared/config.py)."""

from __future__ import annotations

import pytest

from shared.config import load_config
from shared.errors import ConfigError

PG = {"DATABASE_URL": "postgresql://u@db/memory"}


def test_local_on_loopback_serves_it_on_3001() -> None:
    config = load_config({}, local=True)
    assert config.server.ui_enabled and config.server.ui_port == 3001
    assert load_config({"UI_PORT": "8080"}, local=True).server.ui_port == 8080


def test_local_on_the_network_serves_it_only_behind_the_key() -> None:
    assert not load_config({"HOST": "0.0.0.0"}, local=True).server.ui_enabled
    assert load_config({"HOST": "0.0.0.0", "MCP_API_KEY": "k"}, local=True).server.ui_enabled


def test_outside_local_it_is_off_unless_asked_for_with_a_key() -> None:
    assert not load_config(PG).server.ui_enabled
    assert not load_config({**PG, "MCP_API_KEY": "k"}).server.ui_enabled
    assert load_config({**PG, "MCP_API_KEY": "k", "UI_ENABLED": "true"}).server.ui_enabled
    with pytest.raises(ConfigError, match="UI_ENABLED=true needs MCP_API_KEY"):
        load_config({**PG, "UI_ENABLED": "true"})
    with pytest.raises(ConfigError, match="UI_ENABLED=true needs MCP_API_KEY"):
        load_config({**PG, "UI_ENABLED": "1", "HOST": "127.0.0.1"})


def test_it_can_be_turned_off_and_bad_values_are_named() -> None:
    assert not load_config({"UI_ENABLED": "false"}, local=True).server.ui_enabled
    with pytest.raises(ConfigError, match="UI_ENABLED must be true or false, got 'maybe'"):
        load_config({"UI_ENABLED": "maybe"}, local=True)
    with pytest.raises(ConfigError, match="UI_PORT must be an integer between 1 and 65535"):
        load_config({"UI_PORT": "70000"}, local=True)
