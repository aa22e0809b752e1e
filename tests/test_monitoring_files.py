"""The shipped Grafana dashboard and Prometheus alert rules (deploy/) name only series a real
daemon exposes, and the rules file has the shape Prometheus loads (``promtool check rules`` too,
where promtool is installed)."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import yaml

from memory_cortex.app import create_app
from tests.conftest import make_config
from tests.helpers import LhmServer, search, store
from tests.http.test_metrics import names, scrape

ROOT = Path(__file__).resolve().parent.parent
DASHBOARD = ROOT / "deploy" / "grafana" / "memory-cortex.json"
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
# Series names in PromQL: ours and the process collector's. ``up`` is made by Prometheus itself.
SERIES = re.compile(r"\b((?:memory_cortex|process)_[a-z0-9_]+)\b")


def alert_rules() -> list[dict[str, Any]]:
    document = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    return [rule for group in document["groups"] for rule in group["rules"]]


def dashboard_exprs() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    return [target["expr"] for panel in panels for target in panel["targets"]]


def test_the_alert_rules_have_the_prometheus_rule_group_shape() -> None:
    document = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    assert set(document) == {"groups"} and document["groups"]
    for group in document["groups"]:
        assert isinstance(group["name"], str) and group["rules"]
        assert set(group) <= {"name", "interval", "limit", "rules"}
        for rule in group["rules"]:
            assert set(rule) <= {"alert", "expr", "for", "keep_firing_for", "labels", "annotations"}
            assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", rule["alert"]) and rule["expr"].strip()
            assert rule.get("for", "0m")[-1] in "smhd"
            assert rule["labels"]["severity"] in ("critical", "warning", "info")
            assert rule["annotations"]["summary"] and rule["annotations"]["description"]
    alerts = {rule["alert"] for rule in alert_rules()}
    assert {"MemoryCortexDown", "MemoryCortexContextSlow", "MemoryCortexLLMErrors"} <= alerts
    promtool = shutil.which("promtool")
    if promtool is not None:  # the real parser, where it is installed (Debian: package prometheus)
        result = subprocess.run([promtool, "check", "rules", str(ALERTS)], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr


def test_the_context_alert_holds_the_200_ms_budget() -> None:
    [rule] = [rule for rule in alert_rules() if rule["alert"] == "MemoryCortexContextSlow"]
    assert "memory_cortex_context_seconds_bucket" in rule["expr"] and rule["expr"].endswith("> 0.2")


async def test_every_series_in_the_dashboard_and_alerts_exists_in_a_real_daemon(
    aiohttp_client: Any, tmp_path: Path, minilm: Any, lhm_server: LhmServer
) -> None:
    used = {
        name
        for expr in [*dashboard_exprs(), *(r["expr"] for r in alert_rules())]
        for name in SERIES.findall(expr)
    }
    assert len(used) > 15
    # With a (loopback) sensor source, so the GPU series exist as on a machine with a GPU.
    config = make_config(tmp_path, hardware=lhm_server.hardware_config(interval_s=0.05, timeout_s=1))
    client = await aiohttp_client(create_app(config, embedder=minilm))
    await store(client, {"fact": "Ada keeps bees on the roof.", "user_id": "ada"})
    await search(client, "bees", "ada")
    for path in ("/context", "/recall"):
        response = await client.post(path, json={"query": "bees", "user_id": "ada"})
        assert response.status == 200
    deadline = time.monotonic() + 10
    while (await (await client.get("/stats")).json())["hardware"]["stale"]:
        assert time.monotonic() < deadline, "the loopback sensors were not read"
        await asyncio.sleep(0.05)
    exposed = names(await scrape(client))
    assert sorted(used - exposed) == []
