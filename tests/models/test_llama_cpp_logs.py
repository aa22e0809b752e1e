"""llama.cpp's own output goes into the structured log (logger ``llama.cpp``: DEBUG, its errors at
WARNING), never as raw text on stderr, and loading a model no longer silences the process's stderr."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from memory_cortex.config import LLMConfig
from memory_cortex.models.llama_cpp_backend import LlamaCppLLM
from memory_cortex.models.llama_cpp_logs import LineAssembler
from memory_cortex.models.llm import LLMUnavailable


def test_fragments_become_one_record_per_line_at_the_level_of_its_start(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="llama.cpp.test")
    lines = LineAssembler(logging.getLogger("llama.cpp.test"))
    lines.feed(2, "llm_load_tensors: loading")  # INFO, no newline yet
    lines.feed(5, ".")  # CONT: progress dots
    lines.feed(5, "..\n")
    lines.feed(4, "llama_model_load: error loading model\nsecond error line\n")  # ERROR
    lines.feed(3, "a warning\n")  # WARN
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.DEBUG, "llm_load_tensors: loading..."),
        (logging.WARNING, "llama_model_load: error loading model"),
        (logging.WARNING, "second error line"),
        (logging.DEBUG, "a warning"),
    ]


def test_two_threads_fragments_never_join_into_one_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="llama.cpp.threads")
    lines = LineAssembler(logging.getLogger("llama.cpp.threads"))
    started, other_wrote = threading.Event(), threading.Event()

    def other() -> None:
        started.wait(5)
        lines.feed(4, "ggml worker: out of")
        other_wrote.set()
        lines.feed(5, " memory\n")

    worker = threading.Thread(target=other)
    worker.start()
    lines.feed(2, "loading tensors")
    started.set()
    other_wrote.wait(5)
    lines.feed(5, " done\n")
    worker.join(5)
    assert sorted((r.levelno, r.getMessage()) for r in caplog.records) == [
        (logging.DEBUG, "loading tensors done"),
        (logging.WARNING, "ggml worker: out of memory"),
    ]


def test_captured_prints_leaves_other_threads_stderr_alone(capsys: pytest.CaptureFixture[str]) -> None:
    from memory_cortex.models.llama_cpp_logs import captured_prints

    with captured_prints():
        import sys

        print("llama.cpp construction note", file=sys.stderr)
        writer = threading.Thread(target=lambda: print("another thread's warning", file=sys.stderr))
        writer.start()
        writer.join(5)
    err = capsys.readouterr().err
    assert "another thread's warning" in err
    assert "llama.cpp construction note" not in err


async def test_a_broken_gguf_is_logged_at_warning_not_printed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG, logger="llama.cpp")
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"NOT A GGUF FILE" * 100)
    llm = LlamaCppLLM(LLMConfig(model_path=broken))
    with pytest.raises(LLMUnavailable, match="cannot load"):
        await llm.start()
    await llm.close()
    warnings = [
        r.getMessage() for r in caplog.records if r.name == "llama.cpp" and r.levelno == logging.WARNING
    ]
    assert any("gguf" in message for message in warnings), warnings
    stderr = capfd.readouterr().err
    assert not any(message in stderr for message in warnings)


@pytest.mark.slow
async def test_model_loading_is_logged_at_debug_and_stderr_stays_open(
    gemma: LlamaCppLLM, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG, logger="llama.cpp")
    capfd.readouterr()
    # Another thread writes to stderr all through the load: none of it may vanish.
    loading = threading.Event()
    written = 0

    def tick() -> None:
        nonlocal written
        while not loading.is_set():
            os.write(2, b"tick\n")
            written += 1
            loading.wait(0.001)

    ticker = threading.Thread(target=tick)
    ticker.start()
    llm: Any = LlamaCppLLM(LLMConfig(model_path=gemma.model_path, n_ctx=512))
    try:
        await llm.start()
    finally:
        loading.set()
        ticker.join()
        await llm.close()
    stderr = capfd.readouterr().err
    assert stderr.count("tick\n") == written and stderr.replace("tick\n", "") == ""
    records = [r for r in caplog.records if r.name == "llama.cpp"]
    assert {r.levelno for r in records} == {logging.DEBUG}
    messages = [r.getMessage() for r in records]
    assert any(m.startswith("llama_model_loader:") for m in messages)  # llama.cpp's C log
    assert any(m.startswith("Model metadata:") for m in messages)  # llama-cpp-python's print
