"""What ``serve`` checks before it loads a model: the listening socket, the database path and the
model files. Each problem is one line that says what to do (the CLI prints it and exits 2), found in
milliseconds rather than after the seconds a model takes to load, and never as a traceback.

The socket is bound here, first, and handed to aiohttp: a port in use is known before anything else
starts, and the daemon holds the port through its start-up.
"""

from __future__ import annotations

import errno
import importlib.util
import os
import socket
from pathlib import Path

import yaml

from .config import Config
from .store.files import make_private_dir


class StartupError(Exception):
    """A reason the daemon cannot start, as one line with its fix."""


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` (not yet listening: the server listens on it)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise StartupError(
            f"server.host {host!r} is not an address of this machine ({exc.strerror}): use 127.0.0.1, or"
            " 0.0.0.0 for every interface"
        ) from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    if os.name == "posix":  # as aiohttp does: a restart does not wait for TIME_WAIT to pass
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise StartupError(_bind_problem(host, port, exc)) from None
    sock.setblocking(False)
    return sock


def _bind_problem(host: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return (
            f"port {port} on {host} is already in use (another memory-cortex? scripts/stop.sh stops it;"
            f" `ss -ltnp 'sport = :{port}'` shows who holds it): stop it, or choose another with --port"
            " or server.port"
        )
    if exc.errno == errno.EACCES:
        return f"port {port} needs privileges on this system: choose one above 1023 (--port or server.port)"
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"server.host {host} is not an address of this machine: use 127.0.0.1, or 0.0.0.0 for every interface"
    return f"cannot listen on {host}:{port}: {exc.strerror or exc}"


def check_paths(config: Config) -> list[str]:
    """Problems with the files the daemon will open, each one line with its fix (empty: none)."""
    problems = []
    db = config.database.path
    if config.database.backend == "postgres":
        pass  # no file: the server is asked when the store opens (a one-line error there)
    elif db.is_dir():
        problems.append(f"database.path {db} is a folder: name a file in it, e.g. --db {db / 'memories.db'}")
    else:
        folder = nearest_existing(db.parent)
        if not os.access(folder, os.W_OK | os.X_OK):
            problems.append(
                f"database.path {db}: cannot write in {folder} (running as uid {os.getuid()}): fix the folder's"
                " permissions, or choose another path with --db or database.path"
            )
    llm = config.llm
    if (
        llm.backend == "llama_cpp"
        and llm.model_path is not None
        and not importlib.util.find_spec("llama_cpp")
    ):
        problems.append(
            f"llm.model_path names {llm.model_path}, but llama-cpp-python is not installed: scripts/start.sh"
            " --with-llama (or pip install 'memory-cortex[llama]'; compiles for 8-25 min), or serve the GGUF"
            " with llama-server and set llm.backend: openai"
        )
    elif llm.backend == "llama_cpp" and llm.model_path is not None and not llm.model_path.is_file():
        problems.append(
            f"llm.model_path {llm.model_path} is not a file: put the GGUF there, or leave model_path empty for"
            " the packaged Gemma 3 270M (or set llm.backend: rules)"
        )
    embeddings = config.embeddings
    if (
        embeddings.backend in ("sentence_transformers", "onnx")
        and embeddings.model_path is not None
        and not embeddings.model_path.is_dir()
    ):
        problems.append(
            f"embeddings.model_path {embeddings.model_path} is not a model folder: point it at one, or leave it"
            " empty for the packaged all-MiniLM-L6-v2"
        )
    return problems


def nearest_existing(folder: Path) -> Path:
    """``folder`` or its nearest ancestor that exists (the one a missing folder is created in)."""
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    return folder


def missing_database_folder(config: Config) -> Path | None:
    """The database's folder when it does not exist yet (the daemon creates it, and says so)."""
    if config.database.backend == "postgres":
        return None
    folder = config.database.path.parent
    return None if folder.exists() else folder


def yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML syntax error as one line: where, and what the parser expected."""
    mark = getattr(exc, "problem_mark", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"the configuration file is not valid YAML{where}: {problem}"


def without_missing_llama(config: Config) -> tuple[Config, str | None]:
    """``config`` as it can run here, and why it was changed (None: unchanged).

    llama-cpp-python is optional (``--with-llama``, the ``llama`` extra: it compiles for minutes).
    ``llm.backend: llama_cpp`` with no ``model_path`` means the packaged Gemma 3 270M, which extracts
    almost nothing beside the rules extractor; without llama.cpp the daemon runs on the rules alone
    and says how to get an LLM, instead of failing to start. A GGUF the user named is not silently
    dropped: :func:`check_paths` reports it.
    """
    llm = config.llm
    if llm.backend != "llama_cpp" or llm.model_path is not None or importlib.util.find_spec("llama_cpp"):
        return config, None
    rules = config.model_copy(update={"llm": llm.model_copy(update={"backend": "rules"})})
    return rules, (
        "llama-cpp-python is not installed, so extraction runs on the rules extractor alone (the packaged"
        " Gemma 3 270M would add almost nothing): for an LLM, run llama-server/Ollama and set llm.backend:"
        " openai, or install llama.cpp with scripts/start.sh --with-llama; llm.backend: rules silences this"
    )


def create_database_folder(config: Config) -> str | None:
    """Create the database's folder (0700) when it is missing; a problem as one line, else None.

    Write access was judged on the nearest existing folder, which some file systems (``/proc``,
    a read-only mount) grant on paper and refuse in fact; creating the folder here finds that out
    before any model loads.
    """
    folder = missing_database_folder(config)
    if folder is None:
        return None
    try:
        make_private_dir(folder)
    except OSError as exc:
        return (
            f"database.path {config.database.path}: cannot create its folder {folder} ({exc.strerror or exc}):"
            " choose another path with --db or database.path"
        )
    return None
