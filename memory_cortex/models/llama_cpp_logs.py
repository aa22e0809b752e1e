"""llama.cpp's own log lines routed into the daemon's structured log (logger ``llama.cpp``).

How llama-cpp-python 0.3.36 logs, read from its source:

- ``llama_cpp/_logger.py`` installs, at import, a C log callback (``llama_cpp.llama_log_set``)
  that ``print``\\ s the raw text to ``sys.stderr`` when it is at least as severe as the level of
  its ``llama-cpp-python`` logger; ``Llama(verbose=False)`` sets that level to ERROR.
- ``Llama(verbose=False)`` also wraps backend initialisation and model loading in
  ``suppress_stdout_stderr``, which ``dup2``\\ s ``/dev/null`` over file descriptors 1 and 2: for
  the whole load, every thread's output is lost, the daemon's own log lines included.
- ``Llama(verbose=True)`` does not redirect, but ``print``\\ s to ``sys.stderr`` from Python: the
  system info, the GGUF metadata and the chat format during construction, and cache and timing
  notes on every call while ``llama.verbose`` stays true.

- The C library it bundles numbers the levels as today's ``ggml.h`` does (NONE 0, DEBUG 1, INFO 2,
  WARN 3, ERROR 4, CONT 5), while ``_logger.py`` still maps the older enum (INFO 1, WARN 2,
  ERROR 3, DEBUG 4): its callback takes errors for debug lines and warnings for errors (measured:
  "invalid magic characters" of a broken GGUF arrives at 4, "control-looking token" notes at 3).

So the backend installs :func:`route_llama_logs` (a callback of its own, for every C log line,
llama.cpp's and ggml's), builds the model with ``verbose=True`` inside :func:`captured_prints`
(the construction's Python prints become DEBUG records), then sets ``llama.verbose = False``. Each
line is one record: DEBUG, or WARNING for llama.cpp's errors. Memory text never appears at INFO.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import logging
import sys
import threading
from collections.abc import Iterator
from typing import Any

log = logging.getLogger("llama.cpp")

# enum ggml_log_level of the bundled ggml: NONE 0, DEBUG 1, INFO 2, WARN 3, ERROR 4, CONT 5 (CONT
# continues the last line). Not llama_cpp._logger's table, which is out of date (see above).
GGML_LOG_ERROR = 4
GGML_LOG_CONT = 5


class LineAssembler:
    """Joins llama.cpp's log fragments into lines (it writes progress dots and pieces of lines
    without a newline) and logs each whole line once, at the level its first fragment had.

    The callback may come from ggml's threads too: each thread assembles its own line, so pieces
    written by two threads at once never join into one.
    """

    def __init__(self, logger: logging.Logger = log) -> None:
        self._logger = logger
        self._threads = threading.local()

    def _state(self) -> tuple[str, int]:
        return getattr(self._threads, "partial", ""), getattr(self._threads, "level", logging.DEBUG)

    def feed(self, ggml_level: int, text: str) -> None:
        partial, level = self._state()
        if ggml_level != GGML_LOG_CONT and not partial:
            level = logging.WARNING if ggml_level == GGML_LOG_ERROR else logging.DEBUG
        *lines, partial = (partial + text).split("\n")
        self._threads.partial, self._threads.level = partial, level
        for line in lines:
            if line.strip():
                self._logger.log(level, line.rstrip())

    def flush(self) -> None:
        """Log this thread's unfinished line, if any."""
        partial, level = self._state()
        self._threads.partial = ""
        if partial.strip():
            self._logger.log(level, partial.rstrip())


class _ThisThreadOnly(io.TextIOBase):
    """``sys.stderr`` while a model loads: what the loading thread writes is kept in ``captured``;
    what any other thread writes goes on to the real stderr, unchanged."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self._owner = threading.get_ident()
        self.captured = io.StringIO()

    def write(self, text: str) -> int:
        if threading.get_ident() == self._owner:
            return self.captured.write(text)
        return int(self._real.write(text))

    def flush(self) -> None:
        self._real.flush()


_assembler = LineAssembler()
_callback: Any = None  # the ctypes callback: kept alive as long as llama.cpp may call it


def route_llama_logs() -> None:
    """Replace llama-cpp-python's C log callback with one that logs through :data:`log` (idempotent;
    the callback is process-wide state of llama.cpp, so it is installed once and kept referenced)."""
    global _callback
    if _callback is not None:
        return
    import llama_cpp

    @llama_cpp.llama_log_callback  # type: ignore[misc]
    def callback(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        _assembler.feed(level, text.decode("utf-8", errors="replace"))

    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
    _callback = callback


@contextlib.contextmanager
def captured_prints() -> Iterator[None]:
    """What llama-cpp-python ``print``\\ s to ``sys.stderr`` from this thread inside the block,
    logged at DEBUG; other threads' writes to ``sys.stderr`` pass through untouched.

    The log handler keeps the stream it was given, so the daemon's own records still reach the
    terminal or the journal meanwhile.
    """
    stream = _ThisThreadOnly(sys.stderr)
    try:
        with contextlib.redirect_stderr(stream):  # type: ignore[type-var]
            yield
    finally:
        _assembler.flush()
        for line in stream.captured.getvalue().splitlines():
            if line.strip():
                log.debug(line.rstrip())
