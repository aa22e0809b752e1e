"""From a session transcript to validated facts: message cleaning, the new-message delta, chunking,
the prompt, schema-constrained LLM output, validation, and the rules fallback.

Why a delta by multiset of message hashes: OpenClaw posts the whole session after every turn. A
plain resend is the old history plus a tail; after a compaction the history is a summary plus the
latest messages. Counting how many times each (role, text) hash was already extracted and walking
the new history, a message is "new" only when its hash has no unused earlier occurrence left. A
resend then yields exactly the tail, a compacted history only what was never seen, and a message
genuinely repeated ("yes") is still extracted the second time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..config import IngestConfig, LLMConfig
from ..models import rules
from ..models.facts import ExtractedFact, fact_list_schema
from ..models.llm import LLM, ChatMessage, LLMUnavailable
from ..redaction import Redacted, has_secret, redact

if TYPE_CHECKING:  # metrics → stats → ingest → here: a runtime import would be a cycle
    from .metrics import Metrics

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 3.5  # conservative for English; CJK is denser, hence the margin below
PROMPT_OVERHEAD_TOKENS = 600

SYSTEM_PROMPT = """You extract durable long-term memories about the user from a conversation.
Return a JSON array. Each item: {"topic": 2-4 words, "fact": one self-contained sentence in the third
person ("The user ..."), "importance": 1-10, "category": one of identity, preference, decision, fact,
insight, todo, correction, skill, relationship, project_state}.
Only facts that will still matter in a week: who the user is, what they like, decided, own, plan,
know, who they know, and corrections of earlier facts. Never greetings, small talk, questions, or
what the assistant said about itself. Never credentials or secrets: no passwords, PINs, codes, API
keys, tokens, private keys or card numbers, not even in part ("[secret removed]" marks one that was
taken out). Use only what the NEW messages say. If nothing qualifies, return []."""


@dataclass(frozen=True)
class Message:
    """One cleaned message. Only ``role`` and ``text`` say what it is (its digest); the rest is
    what the client told about it, kept for the verbatim turn it becomes."""

    role: str
    text: str
    name: str | None = field(default=None, compare=False)  # the speaker's name, when the client sent one
    timestamp: Any = field(default=None, compare=False)  # the message's own time, as sent
    ref: str | None = field(default=None, compare=False)  # the client's message id

    @property
    def digest(self) -> str:
        return hashlib.sha256(f"{self.role}\x1f{self.text}".encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Delta:
    """What a job has to extract, and what to remember afterwards."""

    new: list[Message]
    context: list[Message]
    history_hashes: list[str]

    @property
    def history_hash(self) -> str:
        return hashlib.sha256("".join(self.history_hashes).encode()).hexdigest()


@dataclass
class ExtractionResult:
    facts: list[ExtractedFact] = field(default_factory=list)
    method: str = "none"
    llm_calls: int = 0
    rejected: int = 0


def message_text(content: Any) -> str:
    """Text of a message ``content``: a string, or OpenClaw's list of blocks ({type: "text", text})."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block.get("text", "")
            for block in content
            if isinstance(block, dict)
            and block.get("type") in (None, "text")
            and isinstance(block.get("text"), str)
        ]
        return "\n".join(part for part in parts if part)
    return ""


def clean_messages(
    raw: Sequence[dict[str, Any]], config: IngestConfig, mask: Callable[[str], Redacted] = redact
) -> list[Message]:
    """User/assistant text only: skipped roles, heartbeats and empty messages removed, and every
    secret masked (:func:`memory_cortex.redaction.redact`): no model ever sees one, nothing keeps one."""
    skip_roles = {role.lower() for role in config.skip_roles}
    cleaned = []
    for item in raw:
        role = str(item.get("role", "")).strip()
        # JSON may carry lone surrogates (\ud800): no UTF-8 store can hold them, so they become U+FFFD;
        # a NUL would cut the text short in SQLite's text functions and FTS.
        text = message_text(item.get("content")).encode("utf-8", "replace").decode("utf-8")
        text = text.replace("\x00", "").strip()
        if not text or role.lower() in skip_roles:
            continue
        if config.skip_heartbeat and any(marker in text for marker in config.heartbeat_markers):
            continue
        cleaned.append(
            Message(
                role=role,
                text=mask(text).text,
                name=_short_text(item.get("name")),
                timestamp=item.get("timestamp"),
                ref=_short_text(item.get("id")),
            )
        )
    return cleaned


def _short_text(value: Any, limit: int = 200) -> str | None:
    """A name or id as sent (a number becomes its text), without control characters; None if empty."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = "".join(c for c in str(value) if c.isprintable()).strip()[:limit]
    return text or None


def mask_secrets_in_messages(messages: Sequence[Any], mask: Callable[[str], Redacted] = redact) -> int:
    """Mask, in place, the secrets in the text of raw ``/ingest`` messages (a string ``content``
    or the ``text`` of its blocks) with ``mask`` (:func:`~memory_cortex.redaction.redact`, or a
    :class:`~memory_cortex.redaction.CleanTextMemo`'s); returns how many were removed.

    Why, when :func:`clean_messages` masks them again: the journal keeps a request's messages
    until its job has run (so that a crash loses nothing), and a secret must not reach the disk
    even for that long. Other keys and the structure are left as they are.
    """
    removed = 0
    for message in messages:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, str):
            masked = mask(content)
            message["content"], removed = masked.text, removed + masked.removed
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and isinstance(block.get("text"), str):
                    masked = mask(block["text"])
                    block["text"], removed = masked.text, removed + masked.removed
    return removed


def compute_delta(messages: list[Message], extracted_hashes: Sequence[str], context_size: int) -> Delta:
    """New messages (see module doc) plus up to ``context_size`` already-extracted ones before them."""
    remaining = Counter(extracted_hashes)
    new: list[Message] = []
    first_new_index: int | None = None
    for index, message in enumerate(messages):
        digest = message.digest
        if remaining[digest] > 0:
            remaining[digest] -= 1
            continue
        if first_new_index is None:
            first_new_index = index
        new.append(message)
    context: list[Message] = []
    if first_new_index is not None and context_size > 0:
        context = messages[max(0, first_new_index - context_size) : first_new_index]
    return Delta(new=new, context=context, history_hashes=[m.digest for m in messages])


def chunk_messages(messages: list[Message], max_chars: int) -> list[list[Message]]:
    """Consecutive groups whose transcript fits ``max_chars``; an over-long message is cut."""
    chunks: list[list[Message]] = []
    current: list[Message] = []
    size = 0
    for message in messages:
        if len(message.text) > max_chars:
            message = Message(message.role, message.text[:max_chars])
        cost = len(message.text) + len(message.role) + 4
        if current and size + cost > max_chars:
            chunks.append(current)
            current, size = [], 0
        current.append(message)
        size += cost
    if current:
        chunks.append(current)
    return chunks


def transcript(messages: Sequence[Message]) -> str:
    return "\n".join(f"{m.role}: {m.text}" for m in messages)


_CONTENT_WORD = re.compile(r"[^\W_]{3,}", re.UNICODE)
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def is_grounded(fact: ExtractedFact, source: str) -> bool:
    """The fact shares at least one content word (or two CJK characters) with what was said.

    A cheap guard against hallucinated or degenerate output (tiny models repeat junk): a fact with
    no word from the conversation cannot be about it.
    """
    source_lower = source.lower()
    words = {
        w for w in _CONTENT_WORD.findall(fact.fact.lower()) if w not in {"the", "user", "user's", "users"}
    }
    if any(word in source_lower for word in words):
        return True
    cjk = set(_CJK_CHAR.findall(fact.fact))
    return len(cjk & set(_CJK_CHAR.findall(source))) >= 2


def parse_facts(text: str) -> tuple[list[ExtractedFact], int]:
    """Valid facts from the model's answer and how many items were rejected.

    Raises ValueError when the answer is not a JSON array at all (the call is then retried).
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc.msg}") from exc
    if isinstance(data, dict):  # some servers wrap the array: {"facts": [...]}
        data = next((v for v in data.values() if isinstance(v, list)), None)
    if not isinstance(data, list):
        raise ValueError("not a JSON array")
    facts, rejected = [], 0
    for item in data:
        try:
            facts.append(ExtractedFact.model_validate(item))
        except ValidationError:
            rejected += 1
    return facts, rejected


class ExtractionService:
    """Turns new messages into facts with the configured LLM, falling back to the rules extractor.

    Args:
        llm: the model (None = rules only).
        llm_config: context size and output budget for chunking.
        rules_alongside_llm: also run the rules extractor on every chunk and merge, so explicit
            statements are never missed by a weak model (duplicates are merged on write).
        metrics: counts the replies that are not a valid fact list (``bad_reply`` LLM errors).
    """

    def __init__(
        self,
        llm: LLM | None,
        llm_config: LLMConfig,
        *,
        rules_alongside_llm: bool = True,
        metrics: Metrics | None = None,
    ) -> None:
        self._llm = llm
        self._metrics = metrics
        self._config = llm_config
        self._rules_alongside_llm = rules_alongside_llm
        self._schema = fact_list_schema()
        budget_tokens = llm_config.n_ctx - llm_config.max_output_tokens - PROMPT_OVERHEAD_TOKENS
        self.max_chunk_chars = max(1000, int(budget_tokens * CHARS_PER_TOKEN * 0.85))

    async def extract(self, delta: Delta, *, allow_rules_only: bool = False) -> ExtractionResult:
        """Facts from ``delta.new``.

        Raises LLMUnavailable when the LLM is down (the job is retried later) unless
        ``allow_rules_only`` (last attempt): then the rules extractor alone does the job.
        """
        result = ExtractionResult()
        if not delta.new:
            return result
        chunks = chunk_messages(delta.new, self.max_chunk_chars)
        methods: set[str] = set()
        for number, chunk in enumerate(chunks):
            context = delta.context if number == 0 else chunks[number - 1][-2:]
            if self._llm is None:
                facts, method = self._rules(chunk), "rules"
            else:
                try:
                    facts, method = await self._with_llm(chunk, context, result)
                except LLMUnavailable:
                    if not allow_rules_only:
                        raise
                    facts, method = self._rules(chunk), "rules"
            if self._llm is not None and self._rules_alongside_llm and method == "llm":
                extra = self._rules(chunk)
                if extra:
                    facts += extra
                    method = "llm+rules"
            methods.add(method)
            result.facts += facts
        unique = _unique(result.facts)
        # A fact about a secret is the secret (or its masked remains): never stored.
        result.facts = [fact for fact in unique if not (has_secret(fact.fact) or has_secret(fact.topic))]
        result.rejected += len(unique) - len(result.facts)
        result.method = "+".join(sorted(methods)) if len(methods) > 1 else next(iter(methods), "none")
        return result

    def _rules(self, chunk: list[Message]) -> list[ExtractedFact]:
        return rules.extract_facts([(m.role, m.text) for m in chunk])

    async def _with_llm(
        self, chunk: list[Message], context: list[Message], result: ExtractionResult
    ) -> tuple[list[ExtractedFact], str]:
        assert self._llm is not None
        prompt = self._prompt(chunk, context)
        source = transcript(chunk)
        for attempt in (1, 2):
            started = time.perf_counter()
            answer = await self._llm.chat(
                prompt,
                json_schema=self._schema,
                max_tokens=self._config.max_output_tokens,
                temperature=0.0 if attempt == 1 else 0.3,
                timeout=self._config.timeout_s,
            )
            result.llm_calls += 1
            try:
                facts, rejected = parse_facts(answer)
            except ValueError as exc:
                log.warning("extraction output invalid", extra={"attempt": attempt, "reason": str(exc)})
                if self._metrics is not None:
                    self._metrics.count_llm_error("bad_reply")
                continue
            grounded = [fact for fact in facts if is_grounded(fact, source)]
            result.rejected += rejected + len(facts) - len(grounded)
            log.info(
                "extraction call",
                extra={
                    "facts": len(grounded),
                    "rejected": rejected + len(facts) - len(grounded),
                    "seconds": round(time.perf_counter() - started, 2),
                },
            )
            return grounded, "llm"
        return self._rules(chunk), "rules"

    def _prompt(self, chunk: list[Message], context: list[Message]) -> list[ChatMessage]:
        parts = []
        if context:
            parts.append("EARLIER (context only, already remembered):\n" + transcript(context))
        parts.append("NEW messages (extract from these):\n" + transcript(chunk))
        parts.append("Answer with the JSON array only.")
        return [ChatMessage("system", SYSTEM_PROMPT), ChatMessage("user", "\n\n".join(parts))]


def _unique(facts: list[ExtractedFact]) -> list[ExtractedFact]:
    seen: dict[str, ExtractedFact] = {}
    for fact in facts:
        key = " ".join(fact.fact.lower().split())
        if key not in seen or fact.importance > seen[key].importance:
            seen[key] = fact
    return list(seen.values())
