"""The Kubernetes manifests: every overlay rendered by the real kustomize and validated strictly
against the Kubernetes schemas, then held to the platform's rules and to the code — the ports the
processes bind, the variables shared/config.py reads, the version pyproject declares, the UID the
images run as.

kubernetes-validate has no schemas for the Prometheus Operator's CRDs (PodMonitor,
PrometheusRule); those are checked structurally here instead.
"""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from typing import Any

import kubernetes_validate
import pytest
import yaml

from shared.config import load_config
from tests.deploy.render import (
    K8S,
    OVERLAYS,
    ROOT,
    Doc,
    config_env_names,
    container_port,
    containers,
    find,
    kustomize_build,
    one,
    project_metadata,
)

# The oldest Kubernetes we claim to support, and the newest the validator knows.
KUBERNETES_VERSIONS = ("1.30.0", kubernetes_validate.latest_version())
NAMESPACE = "agent-mcps"
API, COMPACTOR = "mcp-memory", "mcp-memory-compactor"
SECRET_KEYS = {"DATABASE_URL", "MCP_API_KEY", "EMBEDDING_API_KEY"}
# Stand-ins for what the Secret holds, so the configuration a pod would see can be loaded here.
SECRET_STAND_INS = {
    "DATABASE_URL": "postgres://memory@postgres:5432/memory",
    "EMBEDDING_API_KEY": "stand-in",
    "MCP_API_KEY": "stand-in",
}


@cache
def rendered(overlay: str) -> tuple[Doc, ...]:
    return tuple(kustomize_build(K8S / "overlays" / overlay))


@pytest.fixture(params=OVERLAYS)
def overlay(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def docs(overlay: str) -> list[Doc]:
    return copy.deepcopy(list(rendered(overlay)))


# ---- schema validation ----


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_rendered_document_validates_strictly(docs: list[Doc], version: str) -> None:
    kinds = set()
    for doc in docs:
        kubernetes_validate.validate(doc, version, strict=True)
        kinds.add(doc["kind"])
    assert kinds == {
        "Namespace",
        "ServiceAccount",
        "ConfigMap",
        "Service",
        "Deployment",
        "PodDisruptionBudget",
        "NetworkPolicy",
    }


def test_strict_validation_rejects_an_unknown_field() -> None:
    """The validation above can fail: a misspelt field is refused, not ignored."""
    deployment = copy.deepcopy(one(list(rendered("s3")), "Deployment", API))
    deployment["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = deployment["spec"][
        "template"
    ]["spec"]["containers"][0].pop("readinessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSIONS[0], strict=True)


def test_the_base_alone_renders() -> None:
    docs = kustomize_build(K8S / "base")
    for doc in docs:
        kubernetes_validate.validate(doc, KUBERNETES_VERSIONS[0], strict=True)


# ---- shape ----


def test_everything_lives_in_the_namespace(docs: list[Doc]) -> None:
    one(docs, "Namespace", NAMESPACE)
    for doc in docs:
        if doc["kind"] != "Namespace":
            assert doc["metadata"].get("namespace") == NAMESPACE, doc["metadata"]["name"]


def test_no_secret_is_rendered(docs: list[Doc]) -> None:
    assert find(docs, "Secret") == []


def test_replicas_and_selectors(docs: list[Doc]) -> None:
    api, compactor = one(docs, "Deployment", API), one(docs, "Deployment", COMPACTOR)
    assert api["spec"]["replicas"] == 2
    assert compactor["spec"]["replicas"] == 1
    for deployment in (api, compactor):
        selector = deployment["spec"]["selector"]["matchLabels"]
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert selector.items() <= labels.items()
    # The two selectors must not overlap, or the Service and the PDB would count compactors.
    assert not (
        api["spec"]["selector"]["matchLabels"].items()
        <= compactor["spec"]["template"]["metadata"]["labels"].items()
    )


def test_service_is_cluster_ip_80_to_the_api_port(docs: list[Doc]) -> None:
    service = one(docs, "Service", API)
    api = one(docs, "Deployment", API)
    assert service["spec"].get("type", "ClusterIP") == "ClusterIP"
    (port,) = service["spec"]["ports"]
    assert port["name"] == "http" and port["port"] == 80
    (container,) = containers(api)
    assert container_port(container, port["targetPort"]) == 3000
    pod_labels = api["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    compactor_labels = one(docs, "Deployment", COMPACTOR)["spec"]["template"]["metadata"]["labels"]
    assert not service["spec"]["selector"].items() <= compactor_labels.items()


def test_pdb_keeps_one_api_pod(docs: list[Doc]) -> None:
    pdb = one(docs, "PodDisruptionBudget", API)
    assert pdb["spec"]["minAvailable"] == 1
    api_labels = one(docs, "Deployment", API)["spec"]["template"]["metadata"]["labels"]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= api_labels.items()


def _pod_spec(docs: list[Doc], name: str) -> dict[str, Any]:
    spec: dict[str, Any] = one(docs, "Deployment", name)["spec"]["template"]["spec"]
    return spec


@pytest.mark.parametrize("name", [API, COMPACTOR])
def test_security_context(docs: list[Doc], name: str) -> None:
    pod = _pod_spec(docs, name)
    pod_context = pod["securityContext"]
    assert pod_context["runAsNonRoot"] is True
    assert pod_context["runAsUser"] == 10001  # the UID the Dockerfiles create and switch to
    assert pod_context["seccompProfile"]["type"] == "RuntimeDefault"
    assert pod.get("automountServiceAccountToken") is False
    assert pod.get("hostNetwork", False) is False
    for container in pod["containers"]:
        context = container["securityContext"]
        assert context["allowPrivilegeEscalation"] is False
        assert context["readOnlyRootFilesystem"] is True
        assert context["capabilities"]["drop"] == ["ALL"]
        assert not context["capabilities"].get("add")
        assert context.get("privileged", False) is False
        assert context.get("runAsUser", 10001) == 10001
        # A read-only root still needs a writable /tmp (tempfile, the SDKs).
        tmp = [m for m in container["volumeMounts"] if m["mountPath"] == "/tmp"]
        assert len(tmp) == 1
        volume = next(v for v in pod["volumes"] if v["name"] == tmp[0]["name"])
        assert "emptyDir" in volume


def _quantity(value: str) -> float:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "m": 1e-3}
    for suffix, factor in units.items():
        if str(value).endswith(suffix):
            return float(str(value)[: -len(suffix)]) * factor
    return float(value)


@pytest.mark.parametrize("name", [API, COMPACTOR])
def test_resources_are_bounded(docs: list[Doc], name: str) -> None:
    for container in _pod_spec(docs, name)["containers"]:
        resources = container["resources"]
        for kind in ("requests", "limits"):
            assert {"cpu", "memory"} <= resources[kind].keys(), (name, kind)
        for resource in ("cpu", "memory"):
            request = _quantity(resources["requests"][resource])
            limit = _quantity(resources["limits"][resource])
            assert request <= limit
    if name == API:
        (container,) = _pod_spec(docs, name)["containers"]
        memory = _quantity(container["resources"]["limits"]["memory"])
        # A Python process with an embedding model and its caches: between 512Mi and 2Gi.
        assert 512 * 2**20 <= memory <= 2 * 2**30


@pytest.mark.parametrize(("name", "port"), [(API, 3000), (COMPACTOR, 9300)])
def test_probes_hit_health_on_the_serving_port(docs: list[Doc], name: str, port: int) -> None:
    """Liveness and startup are /health; the API's readiness is /ready, which checks storage."""
    (container,) = _pod_spec(docs, name)["containers"]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        http = container[probe]["httpGet"]
        expected = "/ready" if (name, probe) == (API, "readinessProbe") else "/health"
        assert http["path"] == expected, (name, probe)
        assert container_port(container, http["port"]) == port, (name, probe)
    # Liveness must not be stricter than readiness, or a slow pod is killed before it is drained.
    liveness, readiness = container["livenessProbe"], container["readinessProbe"]
    assert liveness["periodSeconds"] * liveness["failureThreshold"] >= (
        readiness["periodSeconds"] * readiness["failureThreshold"]
    )


@pytest.mark.parametrize(("name", "port"), [(API, 3000), (COMPACTOR, 9300)])
def test_prometheus_annotations_name_the_metrics_port(
    docs: list[Doc], name: str, port: int
) -> None:
    deployment = one(docs, "Deployment", name)
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/path"] == "/metrics"
    assert int(annotations["prometheus.io/port"]) == port
    (container,) = containers(deployment)
    assert port in {p["containerPort"] for p in container["ports"]}


def test_api_pods_spread_and_drain_in_time(docs: list[Doc]) -> None:
    pod = _pod_spec(docs, API)
    spread = pod.get("topologySpreadConstraints", [])
    anti = pod.get("affinity", {}).get("podAntiAffinity")
    assert spread or anti
    hostnames = [c for c in spread if c["topologyKey"] == "kubernetes.io/hostname"]
    assert hostnames or anti
    api_labels = one(docs, "Deployment", API)["spec"]["template"]["metadata"]["labels"]
    for constraint in spread:
        assert constraint["labelSelector"]["matchLabels"].items() <= api_labels.items()
    # The final flush is bounded at 10 s after close; the preStop pause comes before SIGTERM.
    (container,) = pod["containers"]
    pre_stop = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
    pause = int(pre_stop[-1]) if pre_stop else 0
    assert pod["terminationGracePeriodSeconds"] >= pause + 10 + 5
    rollout = one(docs, "Deployment", API)["spec"]["strategy"]["rollingUpdate"]
    assert rollout["maxUnavailable"] == 0


def _policy_for(docs: list[Doc], name: str) -> Doc:
    labels = one(docs, "Deployment", name)["spec"]["template"]["metadata"]["labels"]
    policies = [
        p
        for p in find(docs, "NetworkPolicy")
        if p["spec"]["podSelector"]["matchLabels"].items() <= labels.items()
    ]
    assert len(policies) == 1, f"expected one NetworkPolicy selecting {name}"
    return policies[0]


def _peers(rule: Doc) -> list[dict[str, str]]:
    return [peer["namespaceSelector"]["matchLabels"] for peer in rule["from"]]


def test_network_policy_admits_only_callers_and_prometheus(docs: list[Doc]) -> None:
    api = _policy_for(docs, API)
    assert api["spec"]["policyTypes"] == ["Ingress"]
    (container,) = containers(one(docs, "Deployment", API))
    rules = api["spec"]["ingress"]
    for rule in rules:
        # Every rule names its sources and its ports: no rule admits everything.
        assert rule.get("from") and rule.get("ports")
        for peer in rule["from"]:
            assert set(peer) == {"namespaceSelector"} and peer["namespaceSelector"]["matchLabels"]
            assert "ipBlock" not in peer
        assert {container_port(container, p["port"]) for p in rule["ports"]} == {3000}
    peers = [labels for rule in rules for labels in _peers(rule)]
    assert {"mcp-memory/client": "true"} in peers
    assert {"kubernetes.io/metadata.name": "agent-studio"} in peers
    assert {"kubernetes.io/metadata.name": "monitoring"} in peers

    compactor = _policy_for(docs, COMPACTOR)
    (rule,) = compactor["spec"]["ingress"]
    assert _peers(rule) == [{"kubernetes.io/metadata.name": "monitoring"}]
    (compactor_container,) = containers(one(docs, "Deployment", COMPACTOR))
    assert {container_port(compactor_container, p["port"]) for p in rule["ports"]} == {9300}


# ---- the manifests against the code ----


def _pod_environ(docs: list[Doc], name: str) -> dict[str, str]:
    """The environment the container would start with, secrets replaced by stand-ins."""
    (container,) = containers(one(docs, "Deployment", name))
    environ: dict[str, str] = {}
    for source in container.get("envFrom", []):
        config_map = one(docs, "ConfigMap", source["configMapRef"]["name"])
        environ.update(config_map["data"])
    for variable in container.get("env", []):
        if "value" in variable:
            environ[variable["name"]] = variable["value"]
            continue
        ref = variable["valueFrom"]["secretKeyRef"]
        if not ref.get("optional", False):
            environ[variable["name"]] = SECRET_STAND_INS[ref["key"]]
    return environ


def test_every_variable_set_is_one_the_code_reads(docs: list[Doc]) -> None:
    known = config_env_names()
    for config_map in find(docs, "ConfigMap"):
        assert set(config_map["data"]) <= known, set(config_map["data"]) - known
    for deployment in find(docs, "Deployment"):
        for container in containers(deployment):
            names = {variable["name"] for variable in container.get("env", [])}
            assert names <= known, names - known


@pytest.mark.parametrize(("name", "port"), [(API, 3000), (COMPACTOR, 9300)])
def test_the_pod_configuration_loads(overlay: str, docs: list[Doc], name: str, port: int) -> None:
    """shared/config.py accepts what the pod would be given, and binds the port probed."""
    config = load_config(_pod_environ(docs, name))
    assert config.backend == overlay
    assert (config.server.port if name == API else config.compactor.metrics_port) == port
    if name == API:
        # Set explicitly, not left to the default: the pod serves every interface.
        assert "HOST" in _pod_environ(docs, name)
        assert config.server.hosts == ("0.0.0.0", "::")
    if overlay == "postgres":
        assert config.embedding.provider == "openai"
    else:
        assert config.embedding.provider == "bedrock"
        assert config.s3.vector_bucket and config.s3.state_bucket


def test_secrets_are_referenced_never_inlined(overlay: str, docs: list[Doc]) -> None:
    for deployment in find(docs, "Deployment"):
        for container in containers(deployment):
            for variable in container.get("env", []):
                if variable["name"] in SECRET_KEYS:
                    assert "value" not in variable, variable["name"]
                    ref = variable["valueFrom"]["secretKeyRef"]
                    assert ref["name"] == "mcp-memory" and ref["key"] == variable["name"]
                    # The API key is optional everywhere (open mode); the database URL and the
                    # embedding key are required where the backend needs them.
                    assert ref["optional"] is (variable["name"] == "MCP_API_KEY")
    api_env = {v["name"] for v in containers(one(docs, "Deployment", API))[0]["env"]}
    assert "MCP_API_KEY" in api_env
    if overlay == "postgres":
        for name in (API, COMPACTOR):
            env = {v["name"] for v in containers(one(docs, "Deployment", name))[0]["env"]}
            assert {"DATABASE_URL", "EMBEDDING_API_KEY"} <= env, name
    for config_map in find(docs, "ConfigMap"):
        assert not set(config_map["data"]) & SECRET_KEYS


def test_secret_example_matches_the_references_and_stays_out_of_kustomize() -> None:
    example = yaml.safe_load((K8S / "secret.example.yaml").read_text(encoding="utf-8"))
    assert example["kind"] == "Secret" and example["metadata"]["name"] == "mcp-memory"
    assert example["metadata"]["namespace"] == NAMESPACE
    text = (K8S / "secret.example.yaml").read_text(encoding="utf-8")
    for key in SECRET_KEYS:
        assert key in text, key
    for value in example["stringData"].values():
        assert "<" in value, f"secret.example.yaml must hold placeholders only: {value!r}"
    for kustomization in K8S.rglob("kustomization.yaml"):
        spec = yaml.safe_load(kustomization.read_text(encoding="utf-8"))
        listed = [*spec.get("resources", []), *(p["path"] for p in spec.get("patches", []))]
        assert not any("secret" in entry for entry in listed), kustomization


def test_image_tags_are_the_project_version(docs: list[Doc]) -> None:
    version = project_metadata()["version"]
    for name, image in ((API, "mcp-memory-api"), (COMPACTOR, "mcp-memory-compactor")):
        (container,) = containers(one(docs, "Deployment", name))
        repository, _, tag = container["image"].rpartition(":")
        assert repository.endswith(f"/{image}"), container["image"]
        assert tag == version, f"{container['image']} is not pyproject's version {version}"


def test_s3_overlay_sets_the_role_annotation() -> None:
    account = one(list(rendered("s3")), "ServiceAccount", "mcp-memory")
    role = account["metadata"]["annotations"]["eks.amazonaws.com/role-arn"]
    assert re.fullmatch(r"arn:aws:iam::\d{12}:role/[\w+=,.@/-]+", role), role


# ---- no literal secrets anywhere under k8s/ ----

SECRET_PATTERNS = {
    "AWS access key id": re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
    "URL with a password": re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@<]+:(?!<)[^\s@/]+@"),
    "password assignment": re.compile(r"(?i)\bpass(word|wd)?\b\s*[:=]\s*(?![\s<\"']*<)\S"),
    "private key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    "AWS secret key": re.compile(r"(?i)aws_secret_access_key\s*[:=]"),
    "bearer token": re.compile(r"(?i)bearer\s+(?!<)[A-Za-z0-9._~+/-]{16,}"),
}


@pytest.mark.parametrize(
    "leak",
    [
        "key: AKIAIOSFODNN7EXAMPLE",
        "DATABASE_URL: postgres://memory:hunter2@db:5432/memory",
        "password: hunter2",
        "-----BEGIN RSA PRIVATE KEY-----",
        "aws_secret_access_key = abc",
        "Authorization: Bearer abcdefghijklmnopqrstuvwxyz",
    ],
)
def test_the_leak_patterns_catch_leaks(leak: str) -> None:
    assert any(pattern.search(leak) for pattern in SECRET_PATTERNS.values()), leak


def test_no_literal_secret_values_under_k8s() -> None:
    files = [p for p in K8S.rglob("*") if p.is_file()]
    assert len(files) >= 10
    for path in files:
        text = path.read_text(encoding="utf-8")
        for what, pattern in SECRET_PATTERNS.items():
            match = pattern.search(text)
            assert match is None, f"{path.relative_to(ROOT)}: {what}: {match.group(0)!r}"
        if path.name != "secret.example.yaml":
            for doc in yaml.safe_load_all(text):
                assert not (doc and doc.get("kind") == "Secret"), path


# ---- the optional Prometheus Operator resources (CRDs: structural checks only) ----


def monitoring() -> list[Doc]:
    return kustomize_build(K8S / "monitoring")


def test_monitoring_resources_are_well_formed() -> None:
    docs = monitoring()
    assert {doc["kind"] for doc in docs} == {"PodMonitor", "PrometheusRule", "ConfigMap"}
    for doc in docs:
        assert doc["metadata"]["namespace"] == NAMESPACE
        assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", doc["metadata"]["name"])
        if doc["kind"] == "ConfigMap":
            assert doc["apiVersion"] == "v1"
            assert set(doc) == {"apiVersion", "kind", "metadata", "data"}
        else:
            assert doc["apiVersion"] == "monitoring.coreos.com/v1"
            assert set(doc) == {"apiVersion", "kind", "metadata", "spec"}


def test_the_dashboard_is_a_configmap_grafanas_sidecar_picks_up() -> None:
    (config_map,) = [d for d in monitoring() if d["kind"] == "ConfigMap"]
    # The label the Grafana chart's dashboard sidecar watches, with a stable name to update.
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert config_map["metadata"]["name"] == "mcp-memory-dashboard"
    (body,) = config_map["data"].values()
    dashboard = json.loads(body)
    assert dashboard["uid"] == "mcp-memory"
    queries = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    assert any("mcp_memory_compactor_" in q for q in queries)
    assert any("mcp_memory_tool_duration_seconds_bucket" in q for q in queries)


def test_pod_monitor_scrapes_both_processes() -> None:
    (monitor,) = [d for d in monitoring() if d["kind"] == "PodMonitor"]
    selector = monitor["spec"]["selector"]["matchLabels"]
    endpoints = {e["port"]: e for e in monitor["spec"]["podMetricsEndpoints"]}
    for overlay in OVERLAYS:
        docs = list(rendered(overlay))
        for name in (API, COMPACTOR):
            deployment = one(docs, "Deployment", name)
            assert selector.items() <= deployment["spec"]["template"]["metadata"]["labels"].items()
            (container,) = containers(deployment)
            annotations = deployment["spec"]["template"]["metadata"]["annotations"]
            scraped = [p for p in container["ports"] if p["name"] in endpoints]
            assert len(scraped) == 1, name
            assert scraped[0]["containerPort"] == int(annotations["prometheus.io/port"])
            assert endpoints[scraped[0]["name"]]["path"] == annotations["prometheus.io/path"]


def _rules() -> list[Doc]:
    (rule,) = [d for d in monitoring() if d["kind"] == "PrometheusRule"]
    return [r for group in rule["spec"]["groups"] for r in group["rules"]]


def test_alert_rules_are_complete() -> None:
    rules = _rules()
    assert {r["alert"] for r in rules} == set(ALERT_METRICS)
    for rule in rules:
        assert set(rule) == {"alert", "expr", "for", "labels", "annotations"}, rule["alert"]
        assert re.fullmatch(r"\d+[smh]", rule["for"])
        assert rule["labels"]["severity"] in {"warning", "critical"}
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]
        assert rule["expr"].count("(") == rule["expr"].count(")"), rule["alert"]


ALERT_METRICS = {
    "McpMemoryShardBacklogGrowing": "mcp_memory_compactor_backlog_shards",
    "McpMemoryCompactorStalled": "mcp_memory_compactor_last_success_timestamp_seconds",
    "McpMemoryCompactorAbsent": "mcp_memory_compactor_last_success_timestamp_seconds",
    "McpMemoryToolErrors": "mcp_memory_tool_calls_total",
    "McpMemoryRecallSlow": "mcp_memory_tool_duration_seconds_bucket",
}


def test_alerts_use_the_processes_metric_names() -> None:
    for rule in _rules():
        assert ALERT_METRICS[rule["alert"]] in rule["expr"], rule["alert"]


def test_the_processes_define_the_alerted_metrics() -> None:
    """The alerts' metric names are the ones services/compactor/metrics.py and
    services/api/metrics.py register."""
    from prometheus_client import REGISTRY

    import services.api.metrics  # noqa: F401  (registers the API's series)
    from services.compactor.metrics import CompactorMetrics

    families = [f for r in (CompactorMetrics().registry, REGISTRY) for f in r.collect()]
    exported = {sample.name for family in families for sample in family.samples}
    # A labelled series exports no sample before its first use: name it from its family.
    suffix = {"counter": "_total", "histogram": "_bucket"}
    exported |= {f.name + suffix.get(f.type, "") for f in families}
    for metric in ALERT_METRICS.values():
        assert metric in exported, (metric, sorted(exported))
