"""Extraction logic: cleaning, the delta against a watermark, chunking, parsing, fallbacks."""

from __future__ import annotations

import pytest

from memory_cortex.config import IngestConfig, LLMConfig
from memory_cortex.models.facts import ExtractedFact
from memory_cortex.models.llm import LLMUnavailable
from memory_cortex.services.extraction import (
    Delta,
    ExtractionService,
    Message,
    chunk_spans,
    clean_messages,
    compute_delta,
    is_grounded,
    message_text,
    parse_facts,
)
from tests.fakes import ScriptedLLM


def msgs(*texts: str) -> list[Message]:
    return [Message("user" if i % 2 == 0 else "assistant", text) for i, text in enumerate(texts)]


def test_content_blocks_and_skipped_roles_and_heartbeats() -> None:
    raw = [
        {"role": "system", "content": "You are helpful"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "I love"},
                {"type": "image"},
                {"type": "text", "text": "jazz"},
            ],
        },
        {"role": "assistant", "content": "HEARTBEAT_OK"},
        {"role": "toolResult", "content": "42"},
        {"role": "assistant", "content": None, "name": "bot"},
        {"role": "assistant", "content": "Noted!"},
    ]
    assert clean_messages(raw, IngestConfig()) == [
        Message("user", "I love\njazz"),
        Message("assistant", "Noted!"),
    ]
    assert message_text(42) == ""


def test_resent_history_yields_only_the_tail() -> None:
    history = msgs("a", "b", "c", "d")
    first = compute_delta(history[:2], [], 4)
    assert first.new == history[:2]
    second = compute_delta(history, first.history_hashes, 1)
    assert second.new == history[2:]
    assert second.context == [history[1]]
    assert compute_delta(history, second.history_hashes, 4).new == []


def test_compacted_history_is_matched_by_overlap() -> None:
    history = msgs("one", "two", "three", "four", "five", "six")
    seen = compute_delta(history, [], 0).history_hashes
    compacted = [Message("user", "Summary of earlier talk"), *history[4:], Message("user", "seven")]
    delta = compute_delta(compacted, seen, 0)
    assert [m.text for m in delta.new] == ["Summary of earlier talk", "seven"]


def test_a_repeated_message_is_still_new_the_second_time() -> None:
    first = compute_delta(msgs("yes", "ok"), [], 0)
    delta = compute_delta(msgs("yes", "ok", "yes"), first.history_hashes, 0)
    assert [m.text for m in delta.new] == ["yes"]


def test_chunks_fit_and_keep_order() -> None:
    messages = msgs(*(f"message number {i} " * 5 for i in range(40)))
    spans = chunk_spans(messages, 500)
    assert [i for span in spans for i in span] == list(range(len(messages)))
    assert len(spans) > 1
    # Each span's transcript, every message with its speaker's label, fits.
    assert all(sum(len(messages[i].text) + len(messages[i].role) + 24 for i in span) <= 500 for span in spans)
    assert chunk_spans([Message("user", "x" * 2000)], 500) == [range(0, 1)]  # cut when it is shown


def test_parse_accepts_arrays_and_wrapped_arrays_and_drops_bad_items() -> None:
    good = {"topic": "tea", "fact": "The user likes tea.", "importance": 5, "category": "preference"}
    facts, rejected = parse_facts(f'[{__import__("json").dumps(good)}, {{"topic": "x"}}, 7]')
    assert [f.fact for f in facts] == ["The user likes tea."] and rejected == 2
    assert parse_facts('{"facts": []}') == ([], 0)
    with pytest.raises(ValueError):
        parse_facts("no json here")
    with pytest.raises(ValueError):
        parse_facts('"a string"')


def test_grounding_rejects_facts_about_nothing_said() -> None:
    fact = ExtractedFact(topic="pets", fact="The user owns a parrot.", importance=5, category="fact")
    assert is_grounded(fact, "user: I bought a parrot yesterday")
    assert not is_grounded(fact, "user: how is the weather?")


async def test_invalid_output_is_retried_once_then_rules_take_over() -> None:
    llm = ScriptedLLM(mode="garbage")
    service = ExtractionService(llm, LLMConfig())
    delta = Delta(
        new=[Message("user", "Remember that my sister's name is Ana.")], context=[], history_hashes=[]
    )
    result = await service.extract(delta)
    assert len(llm.calls) == 2
    assert result.method == "rules"
    assert any("Ana" in fact.fact for fact in result.facts)


async def test_llm_down_raises_unless_last_attempt() -> None:
    service = ExtractionService(ScriptedLLM(mode="down"), LLMConfig())
    delta = Delta(new=[Message("user", "My favourite colour is green.")], context=[], history_hashes=[])
    with pytest.raises(LLMUnavailable):
        await service.extract(delta)
    result = await service.extract(delta, allow_rules_only=True)
    assert result.method == "rules" and result.facts


async def test_each_fact_is_labelled_with_the_extractor_that_found_it() -> None:
    """Issue 35: a job whose LLM added nothing is the rules' job, not "llm+rules"."""
    delta = Delta(
        new=[Message("user", "Remember that my sister's name is Ana.")], context=[], history_hashes=[]
    )
    result = await ExtractionService(ScriptedLLM(answer="[]"), LLMConfig()).extract(delta)
    assert result.facts and result.extractors == ["rules"] * len(result.facts)
    assert result.method == "rules"
    # Both found something: each fact says which found it, the job says both.
    result = await ExtractionService(ScriptedLLM(), LLMConfig()).extract(delta)
    found_by = dict(zip((fact.fact for fact in result.facts), result.extractors, strict=True))
    assert found_by.pop("The user said: Remember that my sister's name is Ana.") == "llm"
    assert found_by and set(found_by.values()) == {"rules"}
    assert result.method == "llm+rules"
    # Nothing found at all: the job says what ran.
    quiet = Delta(new=[Message("user", "Good morning!")], context=[], history_hashes=[])
    result = await ExtractionService(ScriptedLLM(answer="[]"), LLMConfig()).extract(quiet)
    assert (result.facts, result.extractors, result.method) == ([], [], "llm")


async def test_long_delta_is_split_into_several_calls() -> None:
    llm = ScriptedLLM()
    service = ExtractionService(llm, LLMConfig(n_ctx=1024, max_output_tokens=128))
    lines = [f"I visited city number {i} and liked its museums very much indeed." for i in range(200)]
    delta = Delta(new=[Message("user", line) for line in lines], context=[], history_hashes=[])
    result = await service.extract(delta)
    assert len(llm.calls) > 1
    assert [line for call in llm.new_lines_per_call() for line in call] == lines
    assert len(result.facts) >= len(lines)


def test_lone_surrogates_cannot_break_a_job() -> None:
    (message,) = clean_messages([{"role": "user", "content": "I love \ud800 jazz"}], IngestConfig())
    assert "\ud800" not in message.text and message.digest
