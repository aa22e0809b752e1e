"""Small in-memory fakes implementing the same Protocols as the real backends (for logic tests)."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime, timedelta
from typing import Any

from memory_cortex.errors import EmbedderUnavailable
from memory_cortex.models.embedders import EmbedderHealth
from memory_cortex.models.hardware import GpuReading, HardwareUnavailable
from memory_cortex.models.llm import ChatMessage, LLMHealth, LLMUnavailable


class ScriptedLLM:
    """An LLM that turns every NEW ``user: ...`` line of the extraction prompt into one fact.

    It records each call, so tests can count how often (and on what) extraction really ran.
    ``mode``: "ok", "down" (raises LLMUnavailable), "garbage" (not JSON), "slow" (sleeps), "broken"
    (raises RuntimeError: a bug, not an outage, so even the last attempt fails the job).
    """

    backend = "scripted"
    model = "scripted-llm"

    def __init__(self, mode: str = "ok", answer: str | None = None) -> None:
        self.mode = mode
        self.answer = answer
        self.calls: list[list[ChatMessage]] = []

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    def health(self) -> LLMHealth:
        return LLMHealth(self.backend, self.model, self.mode == "ok")

    async def chat(
        self,
        messages: list[ChatMessage],
        *,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        timeout: float | None = None,
    ) -> str:
        self.calls.append(messages)
        if self.mode == "down":
            raise LLMUnavailable("connection refused")
        if self.mode == "broken":
            raise RuntimeError("llama.cpp aborted: ggml_assert failed")
        if self.mode == "garbage":
            return "Sure! Here are the facts: <html>"
        if self.mode == "slow":
            await asyncio.sleep(30)
        if self.answer is not None:
            return self.answer
        if json_schema is None:
            return "Synthesised: " + messages[-1].content.splitlines()[1]
        prompt = messages[-1].content
        new_part = prompt.split("NEW messages (extract from these):", 1)[1]
        facts = [
            {
                "topic": "said",
                "fact": f"The user said: {text.strip()}",
                "importance": 5,
                "category": "fact",
                "source": [int(number)],
            }
            for number, text in _OWNER_LINE.findall(new_part)
        ]
        return json.dumps(facts)

    def new_lines_per_call(self) -> list[list[str]]:
        """The user lines each extraction call was asked about."""
        result = []
        for messages in self.calls:
            new_part = messages[-1].content.split("NEW messages (extract from these):", 1)[-1]
            result.append([text for _, text in _OWNER_LINE.findall(new_part)])
        return result


# A NEW message of the user in the extraction prompt: "[3] the user: …" or "[3] Priya (the user): …".
_OWNER_LINE = re.compile(r"^\[(\d+)\] (?:the user|.+? \(the user\)): (.+)$", re.MULTILINE)


class ScriptedGpuSource:
    """A GPU source (the ``GpuSource`` Protocol) that reports one GPU at the load a test sets.

    ``load``: the core load to report, or None for a card without a load sensor; ``down``: a reason
    to fail with (HardwareUnavailable), as LHM does when it is unreachable.
    """

    name = "scripted"

    def __init__(self, load: float | None = 97.0, vram_free_mb: float | None = 6262.0) -> None:
        self.load = load
        self.vram_free_mb = vram_free_mb
        self.down: str | None = None
        self.reads = 0

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def read(self) -> list[GpuReading]:
        self.reads += 1
        if self.down is not None:
            raise HardwareUnavailable(self.down)
        return [
            GpuReading(
                name="AMD Radeon RX 7900 XTX",
                vendor="amd",
                hardware_id="/gpu-amd/0",
                load_percent=self.load,
                vram_free_mb=self.vram_free_mb,
                vram_total_mb=24496.0,
            )
        ]


class FakeClock:
    """Unix time that only moves when told; ``sleep`` moves it and runs ``on_sleep`` (e.g. a poll)."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start
        self.slept: list[float] = []
        self.on_sleep: Any = None

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        if self.on_sleep is not None:
            await self.on_sleep()


class MovableClock:
    """A UTC datetime clock (the lifecycle's) that only moves when a test says so."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


class DeadEmbedder:
    """Same Protocol as the real ones; every call fails as an unreachable service would."""

    backend = "http"

    def __init__(self, model: str, dim: int) -> None:
        self.model = model
        self.dim = dim
        self.calls = 0

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def embed_documents(self, texts: Any, *, background: bool = False) -> Any:
        self.calls += 1
        raise EmbedderUnavailable("connection refused")

    async def embed_query(self, text: str, *, timeout: float | None = None) -> Any:
        self.calls += 1
        raise EmbedderUnavailable("connection refused")

    def available(self) -> bool:
        return True

    def health(self) -> Any:
        return EmbedderHealth(self.backend, self.model, False, self.dim, "connection refused")
