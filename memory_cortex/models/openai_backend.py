"""An OpenAI-compatible ``POST /v1/chat/completions`` (llama-server with Qwen3-8B in production).

One long-lived ``httpx.AsyncClient`` created in :meth:`OpenAILLM.start`, explicit timeouts, every
httpx error mapped to :class:`LLMUnavailable` here, once.

Retries. The ``timeout`` of a call bounds the whole call, retries and back-off included: each
attempt gets only the time that is left, and a back-off that would end past the deadline is not
slept. Retried: a refused or timed-out connection, a connection dropped before a reply (the
server restarted), HTTP 429 and 5xx — the generation never ran or failed, so trying again is
cheap. Not retried: a read timeout (the server was busy generating; the budget is spent, and a
retry would only start the same long generation over), any other 4xx (the request is wrong and
stays wrong), and a 200 whose body is not a chat completion.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx

from ..config import LLMConfig
from ..urls import redacted_url
from .llm import ChatMessage, LLMErrorKind, LLMHealthTracking, strip_thinking, with_no_think

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 5.0  # a loopback/LAN server that takes longer to accept is down
PROBE_TIMEOUT_S = 5.0  # the start-up reachability check
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class _Retryable(Exception):
    """One attempt failed in a way worth another try (the message says how)."""

    def __init__(
        self, message: str, retry_after_s: float | None = None, *, kind: LLMErrorKind = "connection"
    ) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
        self.kind: LLMErrorKind = kind  # what the call fails as when no retry is left


class OpenAILLM(LLMHealthTracking):
    """A chat model behind an OpenAI-compatible HTTP API.

    Args:
        config: ``url``, ``model``, ``api_key``, ``timeout_s``, ``retries``, ``retry_backoff_s``
            and ``disable_thinking`` are used.
        transport: an httpx transport to use instead of the network one (tests, proxies).
    """

    backend = "openai"

    def __init__(self, config: LLMConfig, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.config = config
        super().__init__(config.model)
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    async def start(self) -> None:
        """Open the client and check the server answers; a server that is down is only a warning."""
        headers = (
            {"Authorization": f"Bearer {self.config.api_key.get_secret_value()}"}
            if self.config.api_key
            else {}
        )
        self._client = httpx.AsyncClient(
            base_url=self.config.url.rstrip("/"),
            timeout=httpx.Timeout(
                self.config.timeout_s, connect=min(self.config.timeout_s, CONNECT_TIMEOUT_S)
            ),
            headers=headers,
            transport=self._transport,
        )
        try:
            response = await self._client.get("/v1/models", timeout=PROBE_TIMEOUT_S)
            response.raise_for_status()
        except httpx.HTTPError as exc:
            # llama-server may start after us, or still be loading (503): calls fail until it answers.
            reason = (
                f"HTTP {exc.response.status_code}"
                if isinstance(exc, httpx.HTTPStatusError)
                else type(exc).__name__
            )
            self._failed(f"not reachable at start-up: {reason}")
        else:
            self._ok = True
            log.info(
                "llm ready",
                extra={"backend": self.backend, "model": self.model, "url": redacted_url(self.config.url)},
            )

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        self._ok = False

    async def chat(
        self,
        messages: list[ChatMessage],
        *,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        timeout: float | None = None,
    ) -> str:
        """The reply, ``<think>`` blocks removed.

        Args:
            messages: the conversation.
            json_schema: sent as ``response_format`` ``json_schema`` (llama-server turns it into a grammar).
            max_tokens: longest reply.
            temperature: 0 = greedy.
            timeout: seconds for the whole call, retries included; ``None`` = ``llm.timeout_s``.
        """
        if self._client is None:
            raise self._failed("client not started", "not_ready")
        timeout = self.config.timeout_s if timeout is None else timeout
        payload = self._payload(messages, json_schema, max_tokens, temperature)
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + timeout
        attempt = 0
        while True:
            remaining = deadline - loop.time()
            try:
                if remaining <= 0:
                    raise TimeoutError
                body = await self._attempt(self._client, payload, remaining)
                break
            except _Retryable as exc:
                backoff = self.config.retry_backoff_s * 2**attempt
                if exc.retry_after_s is not None:
                    backoff = max(backoff, exc.retry_after_s)
                if attempt >= self.config.retries or loop.time() + backoff >= deadline:
                    raise self._failed(f"{exc} (after {attempt + 1} attempts)", exc.kind) from exc
                log.info(
                    "llm call retried",
                    extra={"backend": self.backend, "reason": str(exc), "attempt": attempt},
                )
                attempt += 1
                await asyncio.sleep(backoff)
            except (TimeoutError, httpx.TimeoutException) as exc:
                raise self._failed(f"no reply within {timeout}s", "timeout") from exc
        text = self._content(body)
        self._answered(loop.time() - started)
        return strip_thinking(text)

    def _payload(
        self,
        messages: list[ChatMessage],
        json_schema: dict[str, Any] | None,
        max_tokens: int,
        temperature: float,
    ) -> dict[str, Any]:
        if self.config.disable_thinking:
            messages = with_no_think(messages)
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": temperature,
            "max_tokens": max_tokens,
            "stream": False,
        }
        if json_schema is not None:
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "facts", "schema": json_schema, "strict": True},
            }
        if self.config.disable_thinking:
            # Qwen3's hard switch in llama-server's jinja template (--jinja); other servers ignore it.
            payload["chat_template_kwargs"] = {"enable_thinking": False}
        return payload

    async def _attempt(self, client: httpx.AsyncClient, payload: dict[str, Any], remaining: float) -> Any:
        """One POST within ``remaining`` seconds; raises :class:`_Retryable` or a mapped error."""
        path = "/v1/chat/completions"
        try:
            # httpx times each read, not the whole response: a server trickling bytes would outlive
            # the budget, so the attempt as a whole is bounded too.
            async with asyncio.timeout(remaining):
                response = await client.post(
                    path,
                    json=payload,
                    timeout=httpx.Timeout(remaining, connect=min(remaining, CONNECT_TIMEOUT_S)),
                )
        except httpx.ConnectTimeout as exc:  # a TimeoutException, but the server never saw the request
            raise _Retryable("connect timeout", kind="connection") from exc
        except httpx.TimeoutException:
            raise  # the generation ran past the budget: not retried (see the module docstring)
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            raise _Retryable(f"{type(exc).__name__}: {exc}", kind="connection") from exc
        except httpx.HTTPError as exc:
            raise self._failed(f"{type(exc).__name__}: {exc}", "connection") from exc
        if response.status_code in RETRY_STATUSES:
            raise _Retryable(
                f"HTTP {response.status_code} from {path}", _retry_after(response), kind="http_status"
            )
        if response.status_code >= 400:
            # The whole address called: a base URL ending in /v1 shows up as /v1/v1/….
            called = redacted_url(str(response.request.url))
            raise self._failed(
                f"HTTP {response.status_code} from {called}: {_error_message(response)}", "http_status"
            )
        try:
            return response.json()
        except ValueError as exc:  # an HTML error page from a proxy, a truncated body
            raise self._failed(f"invalid JSON from {path}", "bad_reply") from exc

    def _content(self, body: Any) -> str:
        try:
            choice = body["choices"][0]
            content = choice["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise self._failed("response is not an OpenAI chat completion", "bad_reply") from exc
        if not isinstance(content, str):
            raise self._failed("response has no text content", "bad_reply")
        if choice.get("finish_reason") == "length":
            log.info("llm reply cut at max_tokens", extra={"backend": self.backend})
        return content


def _retry_after(response: httpx.Response) -> float | None:
    """``Retry-After`` in seconds when the server sent a number (the HTTP-date form is ignored)."""
    try:
        return max(0.0, float(response.headers["Retry-After"]))
    except (KeyError, ValueError):
        return None


def _error_message(response: httpx.Response) -> str:
    """The server's own words (OpenAI shape ``{"error": {"message": ...}}``), kept short."""
    try:
        error = response.json().get("error")
        message = error.get("message") if isinstance(error, dict) else error
    except (ValueError, AttributeError):
        message = None
    return str(message or response.text or response.reason_phrase)[:200]
