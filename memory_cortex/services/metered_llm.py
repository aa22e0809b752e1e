"""The LLM every service calls, its failures counted by kind (``memory_cortex_llm_errors_total``).

One wrapper around whichever backend the config names, so extraction, recall, the reranker and the
lifecycle are counted alike without each catching and counting on its own. A failure the backends
report is an :class:`~memory_cortex.models.llm.LLMUnavailable` carrying its ``kind``; anything else
escaping a backend (a bug, a llama.cpp abort) counts as ``error``. A call cancelled by its caller
(a caller's own deadline) is not counted here: that caller knows what it was and counts it.
"""

from __future__ import annotations

from typing import Any

from ..models.llm import LLM, ChatMessage, LLMHealth, LLMUnavailable
from .metrics import Metrics


class MeteredLLM:
    """``llm`` with its failed chats counted in ``metrics``; everything else is passed through.

    Args:
        llm: the backend.
        metrics: where the failures are counted.
    """

    def __init__(self, llm: LLM, metrics: Metrics) -> None:
        self.inner = llm
        self.backend = llm.backend
        self.model = llm.model
        self._metrics = metrics

    async def start(self) -> None:
        await self.inner.start()

    async def close(self) -> None:
        await self.inner.close()

    def health(self) -> LLMHealth:
        return self.inner.health()

    async def chat(
        self,
        messages: list[ChatMessage],
        *,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        timeout: float | None = None,
    ) -> str:
        """The backend's reply (see :meth:`~memory_cortex.models.llm.LLM.chat`)."""
        try:
            return await self.inner.chat(
                messages,
                json_schema=json_schema,
                max_tokens=max_tokens,
                temperature=temperature,
                timeout=timeout,
            )
        except LLMUnavailable as exc:
            self._metrics.count_llm_error(exc.kind)
            raise
        except Exception:
            self._metrics.count_llm_error("error")
            raise
