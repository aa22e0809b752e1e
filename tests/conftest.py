"""Shared fixtures: real SQLite files in tmp_path, a real aiohttp server on a loopback port, and the
real all-MiniLM-L6-v2 model from its PyPI package (loaded once per session: ~5-15 s)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from memory_cortex.config import Config, EmbeddingsConfig
from memory_cortex.models.embedders import SentenceTransformerEmbedder
from tests.helpers import LhmServer, lhm_fixture

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _no_cortex_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests see only the config they build, never the developer's MEMORY_CORTEX_* variables nor
    their ~/.config/memory-cortex/config.yaml (XDG_CONFIG_HOME is an empty folder of the run's)."""
    for name in list(os.environ):
        if name.startswith("MEMORY_CORTEX_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.getbasetemp() / "xdg-config-empty"))


@pytest.fixture(scope="session")
def minilm() -> Iterator[SentenceTransformerEmbedder]:
    """The packaged model, float, on torch (the same vectors as the onnx backend's float export),
    started (and warmed) once for the whole run."""
    embedder = SentenceTransformerEmbedder(EmbeddingsConfig(backend="sentence_transformers"))
    asyncio.run(embedder.start())
    yield embedder
    asyncio.run(embedder.close())


@pytest.fixture(scope="session")
def int8_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An embeddings.cache_dir shared by the tests of embeddings.quantize: int8 (the float export and
    its quantised copy are made once a run)."""
    return tmp_path_factory.mktemp("onnx-int8-cache")


@pytest.fixture(scope="session")
def gemma(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The real packaged Gemma 3 270M through llama-cpp-python, assembled and loaded once per run."""
    from memory_cortex.config import LLMConfig
    from memory_cortex.models.llama_cpp_backend import LlamaCppLLM

    llm = LlamaCppLLM(LLMConfig(models_dir=tmp_path_factory.mktemp("models"), n_ctx=2048))
    asyncio.run(llm.start())
    yield llm
    asyncio.run(llm.close())


def make_config(tmp_path: Path, **sections: Any) -> Config:
    """A config whose database lives in ``tmp_path`` (with ``--backend postgres``: a PostgreSQL
    database of its own, the same one for every config of this ``tmp_path``); ``sections`` override
    whole sections."""
    from tests import postgres

    database = {
        "path": tmp_path / "memories.db",
        **postgres.database_section(tmp_path),
        **sections.pop("database", {}),
    }
    # A generous query-embedding timeout: a busy CI box must not turn a test FTS-only by chance.
    embeddings = {"query_timeout_s": 10.0, **sections.pop("embeddings", {})}
    # Rules-only extraction unless a test asks for a model: apps start fast and deterministic.
    llm = {"backend": "rules", **sections.pop("llm", {})}
    # No hardware polling unless a test points it at its own loopback server: never a real host.
    hardware = {"enabled": False, **sections.pop("hardware", {})}
    return Config(database=database, embeddings=embeddings, llm=llm, hardware=hardware, **sections)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend",
        choices=("sqlite", "postgres"),
        default="sqlite",
        help="the store the `config` fixture (and so the `client` apps) use: scripts/test.sh runs the"
        " HTTP tests once per backend",
    )


@pytest.fixture(scope="session", autouse=True)
def _app_backend(request: pytest.FixtureRequest) -> Iterator[None]:
    """With ``--backend postgres``, every config :func:`make_config` builds uses the session's
    PostgreSQL server (started here, once)."""
    from tests import postgres

    if request.config.getoption("--backend") != "postgres":
        yield
        return
    postgres.APP_SERVER_URI = request.getfixturevalue("postgres_server")
    yield
    postgres.APP_SERVER_URI = None


@pytest.fixture(autouse=True)
def _drop_app_databases() -> Iterator[None]:
    """With ``--backend postgres``: the databases a test made are dropped after it (its apps are
    closed by then: this fixture is set up before the test's own, so torn down after them); those of
    module- or session-wide fixtures, made before it, stay."""
    from tests import postgres

    before = postgres.app_databases()
    yield
    postgres.drop_app_databases(keep=before)


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return make_config(tmp_path)


@pytest.fixture
async def client(aiohttp_client: Any, config: Config, minilm: SentenceTransformerEmbedder) -> TestClient:
    """The whole app on a real loopback port, with the real model."""
    return await aiohttp_client(create_app(config, embedder=minilm))


@pytest.fixture
async def restartable(
    aiohttp_client: Any, config: Config, minilm: SentenceTransformerEmbedder
) -> AsyncIterator[Any]:
    """Start the app, stop it, start a new one on the same database file."""
    clients: list[TestClient] = []

    async def start() -> TestClient:
        if clients:
            await clients[-1].close()
        clients.append(await aiohttp_client(create_app(config, embedder=minilm)))
        return clients[-1]

    yield start


@pytest.fixture
async def lhm_server(aiohttp_server: Any) -> AsyncIterator[LhmServer]:
    """A loopback LibreHardwareMonitor serving the AMD fixture (RX 7900 XTX at 97 % load: busy)."""
    lhm = LhmServer(lhm_fixture("data-amd-SYNTHETIC.json"))
    server = await aiohttp_server(lhm.app)
    lhm.port = server.port
    yield lhm
    lhm.released.set()  # a "slow" answer still pending ends now, so the server closes at once


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A real PostgreSQL 18 with pgvector for the whole run (tests/postgres.py); its admin URL."""
    import shutil
    import tempfile

    from tests.postgres import start_server

    # Not under pytest's own temp folder: a concurrent pytest run prunes old ones, server and all.
    folder = Path(tempfile.mkdtemp(prefix="memory-cortex-postgres-"))
    server = start_server(folder)
    yield server.get_uri()
    server.cleanup()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A fresh, empty database on the session's server, dropped after the test."""
    from tests.postgres import fresh_database

    yield from fresh_database(postgres_server)
