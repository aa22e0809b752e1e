"""Small in-memory fakes implementing the same Protocols as the real backends (for logic tests)."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from middleware.models.llm import ChatMessage, LLMHealth, LLMUnavailable


class ScriptedLLM:
    """An LLM that turns every NEW ``user: ...`` line of the extraction prompt into one fact.

    It records each call, so tests can count how often (and on what) extraction really ran.
    ``mode``: "ok", "down" (raises LLMUnavailable), "garbage" (not JSON), "slow" (sleeps).
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
            {"topic": "said", "fact": f"The user said: {text.strip()}", "importance": 5, "category": "fact"}
            for text in re.findall(r"^user: (.+)$", new_part, flags=re.MULTILINE)
        ]
        return json.dumps(facts)

    def new_lines_per_call(self) -> list[list[str]]:
        """The user lines each extraction call was asked about."""
        result = []
        for messages in self.calls:
            new_part = messages[-1].content.split("NEW messages (extract from these):", 1)[-1]
            result.append(re.findall(r"^user: (.+)$", new_part, flags=re.MULTILINE))
        return result
