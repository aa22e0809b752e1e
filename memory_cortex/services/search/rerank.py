"""Reranking the best fused candidates with the local LLM, inside a hard time budget (opt-in).

No cross-encoder ships its weights in a package here, so the reranker is the chat LLM itself,
listwise: it reads the question and the top candidates, numbered, and answers the numbers of those
that help, best first (a JSON schema constrains the answer). One call per search, a few dozen output
tokens: worth it with Qwen3-8B on a GPU behind llama-server, hopeless with the embedded Gemma 270M
on a CPU — which is why it is off by default and always bounded.

Whatever goes wrong — the budget runs out, the LLM is down or busy, the answer is not a ranking —
the search returns the fused order unchanged, and the reranker rests for ``cooldown_s`` so that a
slow model is not handed one more request per search.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...config import RerankConfig
from ...models.llm import LLM, ChatMessage, LLMUnavailable
from .model import SearchHit

log = logging.getLogger(__name__)

RERANK_PROMPT = (
    "You rank memories by how much they help answer a question. The memories are numbered. Reply"
    ' with JSON {"ranking": [numbers]}: the numbers of the memories that help answer the question,'
    " most helpful first. Leave out the ones that do not help."
)


@dataclass(frozen=True)
class RerankOutcome:
    """The hits in their new order, and what happened: ``reranked``, ``timeout``, ``unavailable``
    (no LLM, or it failed), ``invalid`` (the answer was not a ranking), ``cooling_down`` or
    ``too_few`` (nothing to reorder)."""

    hits: list[SearchHit]
    status: str
    elapsed_ms: float


class LlmReranker:
    """Reorders search hits with the LLM; never slower than the budget, never worse than no answer.

    Args:
        llm: the chat model; None = no reranking (every call is ``unavailable``).
        config: the ``rerank`` section.
        clock: monotonic seconds (tests move it through the cool-down).
    """

    def __init__(
        self, llm: LLM | None, config: RerankConfig, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._llm = llm
        self._config = config
        self._clock = clock
        self._resting_until = 0.0

    async def rerank(self, query: str, hits: Sequence[SearchHit]) -> RerankOutcome:
        started = time.perf_counter()

        def outcome(ordered: Sequence[SearchHit], status: str) -> RerankOutcome:
            return RerankOutcome(list(ordered), status, round((time.perf_counter() - started) * 1000, 2))

        if len(hits) < 2:
            return outcome(hits, "too_few")
        if self._llm is None:
            return outcome(hits, "unavailable")
        if self._clock() < self._resting_until:
            return outcome(hits, "cooling_down")
        budget_s = self._config.budget_ms / 1000
        try:
            answer = await asyncio.wait_for(
                self._llm.chat(
                    self._messages(query, hits),
                    json_schema=ranking_schema(len(hits)),
                    max_tokens=8 + 4 * len(hits),
                    temperature=0.0,
                    timeout=budget_s,
                ),
                timeout=budget_s,
            )
        except TimeoutError:
            self._rest("timeout")
            return outcome(hits, "timeout")
        except LLMUnavailable as exc:
            self._rest(str(exc)[:200])
            return outcome(hits, "unavailable")
        order = parse_ranking(answer, len(hits))
        if order is None:
            self._rest("the answer was not a ranking")
            return outcome(hits, "invalid")
        return outcome(reorder(hits, order), "reranked")

    def _messages(self, query: str, hits: Sequence[SearchHit]) -> list[ChatMessage]:
        cut = self._config.max_chars
        numbered = "\n".join(f"[{i}] {hit.memory.fact[:cut]}" for i, hit in enumerate(hits, 1))
        return [
            ChatMessage("system", RERANK_PROMPT),
            ChatMessage("user", f"Question: {query}\n\nMemories:\n{numbered}"),
        ]

    def _rest(self, reason: str) -> None:
        self._resting_until = self._clock() + self._config.cooldown_s
        log.info("reranker resting", extra={"reason": reason, "cooldown_s": self._config.cooldown_s})


def ranking_schema(count: int) -> dict[str, object]:
    """The JSON schema of an answer: ``{"ranking": [1…count, …]}``."""
    return {
        "type": "object",
        "properties": {
            "ranking": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1, "maximum": count},
                "maxItems": count,
            }
        },
        "required": ["ranking"],
    }


def parse_ranking(answer: str, count: int) -> list[int] | None:
    """The 0-based positions the answer lists, in its order, without repeats or numbers out of range;
    None when it is not ``{"ranking": [...]}`` at all."""
    try:
        data = json.loads(answer)
    except json.JSONDecodeError:
        return None
    ranking = data.get("ranking") if isinstance(data, dict) else None
    if not isinstance(ranking, list):
        return None
    order: list[int] = []
    for number in ranking:
        valid = isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= count
        if valid and number - 1 not in order:
            order.append(number - 1)
    return order


def reorder(hits: Sequence[SearchHit], order: Sequence[int]) -> list[SearchHit]:
    """The listed hits first, in the LLM's order, then the rest in the fused order; ``score`` becomes
    the new rank's (1 for the first, falling evenly) so results stay sorted by it, while ``relevance``
    keeps the fused score."""
    listed = set(order)
    ordered = [hits[i] for i in order] + [hit for i, hit in enumerate(hits) if i not in listed]
    count = len(ordered)
    return [dataclasses.replace(hit, score=(count - rank) / count) for rank, hit in enumerate(ordered)]
