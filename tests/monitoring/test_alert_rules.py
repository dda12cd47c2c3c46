"""The PrometheusRule's alerts, checked and unit-tested by promtool itself."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.monitoring._prometheus import alert_names, tool, write_rules

UNIT_TESTS = Path(__file__).with_name("alerts_test.yaml")


def promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tool("promtool"), *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_the_rules_parse(tmp_path: Path) -> None:
    rules = write_rules(tmp_path)
    checked = promtool("check", "rules", str(rules), cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(alert_names())} rules found" in checked.stdout


def test_every_alert_fires_on_its_condition_and_stays_quiet_when_healthy(tmp_path: Path) -> None:
    write_rules(tmp_path)
    shutil.copy(UNIT_TESTS, tmp_path / UNIT_TESTS.name)
    tested = promtool("test", "rules", UNIT_TESTS.name, cwd=tmp_path)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_every_alert_has_a_firing_and_a_quiet_case() -> None:
    cases: list[dict[str, Any]] = [
        case
        for test in yaml.safe_load(UNIT_TESTS.read_text())["tests"]
        for case in test["alert_rule_test"]
    ]
    firing = {c["alertname"] for c in cases if c["exp_alerts"]}
    quiet = {c["alertname"] for c in cases if not c["exp_alerts"]}
    assert firing == alert_names()
    assert quiet == alert_names()
