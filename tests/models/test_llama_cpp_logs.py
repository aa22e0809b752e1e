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
