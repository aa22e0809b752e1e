"""From the new messages of a conversation to validated facts, each about the right person and
from the message(s) it was read from: chunking, the LLM call (``extraction_prompt``) with
schema-constrained output, validation, and the rules extractor (alone, beside the LLM, or as its
fallback).

Who wrote each message is decided before (``speakers``): the owner's words become facts about the
user; another person's about them; an unknown speaker's and the assistant's about nobody.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import ValidationError

from ..config import LLMConfig
from ..models import rules
from ..models.facts import ExtractedFact, fact_list_schema, is_owner
from ..models.llm import LLM, LLMUnavailable
from ..redaction import has_secret
from .extraction_prompt import SYSTEM_PROMPT, KnownFact, extraction_prompt
from .messages import (
    Delta,
    Message,
    clean_messages,
    compute_delta,
    message_text,
)
from .speakers import Speaker

if TYPE_CHECKING:  # metrics → stats → ingest → here: a runtime import would be a cycle
    from .metrics import Metrics

__all__ = [
    "SYSTEM_PROMPT",
    "Delta",
    "ExtractionResult",
    "ExtractionService",
    "KnownFact",
    "Message",
    "chunk_spans",
    "clean_messages",
    "compute_delta",
    "is_grounded",
    "message_text",
    "parse_facts",
    "transcript",
]

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 3.5  # conservative for English; CJK is denser, hence the margin below
PROMPT_OVERHEAD_TOKENS = 900  # the instructions, and the current facts shown beside the messages
OWNER_SPEAKER = Speaker(None, True, True)


@dataclass
class ExtractionResult:
    """The facts of one job. Each fact's ``source`` holds the 1-based numbers, in ``delta.new``, of
    the messages it was read from, and its ``replaces`` (an LLM's update) the memory id of the
    current fact it replaces, checked against the facts it was shown. ``extractors``: which
    extractor found each fact ("llm" or "rules"), in the order of ``facts``; ``method``: those of
    the whole job ("llm+rules" when both found facts in it)."""

    facts: list[ExtractedFact] = field(default_factory=list)
    extractors: list[str] = field(default_factory=list)
    method: str = "none"
    llm_calls: int = 0
    rejected: int = 0


def chunk_spans(messages: Sequence[Message], max_chars: int) -> list[range]:
    """Consecutive index ranges whose transcript fits ``max_chars`` (an over-long message is a range
    of its own, cut when it is shown)."""
    spans: list[range] = []
    start, size = 0, 0
    for index, message in enumerate(messages):
        cost = min(len(message.text), max_chars) + len(message.role) + 24  # the speaker's label
        if index > start and size + cost > max_chars:
            spans.append(range(start, index))
            start, size = index, 0
        size += cost
    if start < len(messages):
        spans.append(range(start, len(messages)))
    return spans


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


def _overlap(fact: ExtractedFact, text: str) -> int:
    """How many of the fact's content words (or CJK characters) ``text`` holds."""
    lower = text.lower()
    words = {w for w in _CONTENT_WORD.findall(fact.fact.lower()) if w not in {"the", "user", "user's"}}
    return sum(1 for word in words if word in lower) + len(set(_CJK_CHAR.findall(fact.fact)) & set(text))


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

    @property
    def uses_llm(self) -> bool:
        """Whether an LLM reads the messages (the current facts it is shown are worth reading)."""
        return self._llm is not None

    async def extract(
        self,
        delta: Delta,
        *,
        speakers: Sequence[Speaker] | None = None,
        context_speakers: Sequence[Speaker] | None = None,
        known: Sequence[KnownFact] = (),
        allow_rules_only: bool = False,
        read_back: bool = False,
    ) -> ExtractionResult:
        """Facts from ``delta.new``, whose writers are ``speakers`` (None: every human message is
        the owner's, as before speakers were known); ``known``: the current facts an LLM is shown.

        ``read_back``: the rules may read ``delta.context`` for whom an opening "he" or "she" means;
        only where its words cannot carry another reach's into these facts (a private job: what
        the owner said anywhere is theirs to see).

        Raises LLMUnavailable when the LLM is down (the job is retried later) unless
        ``allow_rules_only`` (last attempt): then the rules extractor alone does the job.
        """
        result = ExtractionResult()
        if not delta.new:
            return result
        said_by = list(speakers) if speakers is not None else [OWNER_SPEAKER] * len(delta.new)
        context_by = (
            list(context_speakers) if context_speakers is not None else [OWNER_SPEAKER] * len(delta.context)
        )
        methods: set[str] = set()
        found_by: dict[int, str] = {}  # id(fact) -> the extractor that found it
        for number, span in enumerate(chunk_spans(delta.new, self.max_chunk_chars)):
            if number == 0:
                context, context_said = delta.context, context_by
            else:
                before = range(max(span.start - 2, 0), span.start)
                context, context_said = [delta.new[i] for i in before], [said_by[i] for i in before]
            back = _said(context, context_said) if read_back or number > 0 else []
            # The rules run on a worker thread: a step of hundreds of messages is CPU work the event
            # loop must not wait on.
            if self._llm is None:
                facts, method = await asyncio.to_thread(self._rules, delta.new, said_by, span, back), "rules"
            else:
                try:
                    facts, method = await self._with_llm(
                        delta, said_by, span, context, context_said, known, result, back
                    )
                except LLMUnavailable:
                    if not allow_rules_only:
                        raise
                    facts, method = await asyncio.to_thread(self._rules, delta.new, said_by, span, back), "rules"
            found_by.update((id(fact), method) for fact in facts)
            if self._llm is not None and self._rules_alongside_llm and method == "llm":
                extra = await asyncio.to_thread(self._rules, delta.new, said_by, span, back)
                found_by.update((id(fact), "rules") for fact in extra)
                facts += extra
            methods.add(method)
            result.facts += facts
        unique = _unique(result.facts)  # an LLM's fact first where the rules found the same
        # A fact about a secret is the secret (or its masked remains): never stored.
        result.facts = [fact for fact in unique if not (has_secret(fact.fact) or has_secret(fact.topic))]
        result.rejected += len(unique) - len(result.facts)
        result.extractors = [found_by[id(fact)] for fact in result.facts]
        methods = set(result.extractors) or methods  # who found what is kept; else what ran
        result.method = "+".join(sorted(methods)) if len(methods) > 1 else next(iter(methods), "none")
        return result

    @staticmethod
    def _rules(
        messages: Sequence[Message], speakers: Sequence[Speaker], span: range, before: Sequence[rules.Said]
    ) -> list[ExtractedFact]:
        """The rules extractor over the messages of ``span`` that may state facts, each fact with
        the number of its message; ``before``: the messages just before them, read only for whom a
        "he" or "she" means."""
        found = rules.extract_statements(
            _said([messages[i] for i in span], [speakers[i] for i in span]), before=before
        )
        return [fact.model_copy(update={"source": [span[at] + 1]}) for at, fact in found]

    async def _with_llm(
        self,
        delta: Delta,
        speakers: Sequence[Speaker],
        span: range,
        context: Sequence[Message],
        context_speakers: Sequence[Speaker],
        known: Sequence[KnownFact],
        result: ExtractionResult,
        back: Sequence[rules.Said],
    ) -> tuple[list[ExtractedFact], str]:
        assert self._llm is not None
        chunk = [_cut(delta.new[i], self.max_chunk_chars) for i in span]
        chunk_speakers = [speakers[i] for i in span]
        prompt = extraction_prompt(chunk, chunk_speakers, context, context_speakers, known)
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
            kept = [
                checked
                for fact in facts
                if fact.action != "none"
                and is_grounded(fact, source)
                and (checked := _attributed(fact, chunk, chunk_speakers, span, known)) is not None
            ]
            dropped = rejected + len(facts) - len(kept)
            result.rejected += dropped
            log.info(
                "extraction call",
                extra={
                    "facts": len(kept),
                    "rejected": dropped,
                    "seconds": round(time.perf_counter() - started, 2),
                },
            )
            return kept, "llm"
        return await asyncio.to_thread(self._rules, delta.new, speakers, span, back), "rules"


def _cut(message: Message, max_chars: int) -> Message:
    return (
        message
        if len(message.text) <= max_chars
        else dataclasses.replace(message, text=message.text[:max_chars])
    )


def _attributed(
    fact: ExtractedFact,
    chunk: Sequence[Message],
    speakers: Sequence[Speaker],
    span: range,
    known: Sequence[KnownFact],
) -> ExtractedFact | None:
    """An LLM's fact checked against who said what: its sources (the numbers it cites, else the
    messages sharing most words with it) must include a message that may state facts; a fact about
    the user needs one of the user's own messages among them (never another person's words, nor an
    unknown speaker's); an update names a fact it was shown. None when it fails."""
    cited = [n for n in dict.fromkeys(fact.source) if 1 <= n <= len(chunk) and speakers[n - 1].states_facts]
    if not cited:
        scored = [(_overlap(fact, message.text), n) for n, message in enumerate(chunk, start=1)]
        scored = [(score, n) for score, n in scored if score > 0 and speakers[n - 1].states_facts]
        best = max((score for score, _ in scored), default=0)
        cited = [n for score, n in scored if score == best and best > 0]
    if not cited:
        return None
    if is_owner(fact.subject) and not any(speakers[n - 1].owner for n in cited):
        return None  # about the user, from someone else's words: not the user's fact
    replaces = None
    if fact.action == "update" and fact.replaces is not None and 1 <= fact.replaces <= len(known):
        replaces = known[fact.replaces - 1].memory_id
    return fact.model_copy(update={"source": [span.start + n for n in cited], "replaces": replaces})


def _said(messages: Sequence[Message], speakers: Sequence[Speaker]) -> list[rules.Said]:
    """``messages`` for the rules: who said each, and whether it may state facts."""
    return [
        rules.Said(m.text, s.voice, states=s.states_facts) for m, s in zip(messages, speakers, strict=True)
    ]


def _unique(facts: list[ExtractedFact]) -> list[ExtractedFact]:
    seen: dict[str, ExtractedFact] = {}
    for fact in facts:
        key = " ".join(fact.fact.lower().split())
        if key not in seen or fact.importance > seen[key].importance:
            seen[key] = fact
    return list(seen.values())
