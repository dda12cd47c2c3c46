"""Prometheus's own tools, as `.ci/run` installs them (Debian's `prometheus` package). Like the
deployment checks' tools, a missing one skips on a developer's machine and fails under
``CI=true``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.deploy.render import require_tool

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "k8s" / "monitoring" / "prometheusrule.yaml"


def tool(name: str) -> str:
    """The path of ``prometheus`` or ``promtool``."""
    return require_tool(name)


def rule_groups() -> dict[str, Any]:
    """The PrometheusRule's spec: exactly a plain Prometheus rules file (groups: ...)."""
    spec: dict[str, Any] = yaml.safe_load(RULES.read_text())["spec"]
    return spec


def write_rules(folder: Path) -> Path:
    path = folder / "rules.yaml"
    path.write_text(yaml.safe_dump(rule_groups(), sort_keys=False))
    return path


def alert_names() -> set[str]:
    return {rule["alert"] for group in rule_groups()["groups"] for rule in group["rules"]}
