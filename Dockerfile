# Memory Cortex in a container: the daemon on the embedded defaults (all-MiniLM-L6-v2 and the rules
# extractor), its data in the /data volume. Real extraction: an LLM server over HTTP
# (deploy/compose/llama-server.yaml or ollama.yaml).
#
#   docker compose up -d                                # compose.yaml: the daemon alone
#   docker build -t memory-cortex .                     # or just the image
#   docker build --build-arg WITH_LLAMA=1 -t memory-cortex .   # with in-process llama.cpp (compiles)
#
# Untested here: the machines this project is built on have a Docker client but no engine, so this
# file has not been built; the same steps (install.sh's) are what CI runs. Report what fails.

# -- build: torch (CPU), the requirements, llama-cpp-python only with WITH_LLAMA=1, the package ---
FROM python:3.11-slim-bookworm AS build
ARG WITH_LLAMA=0
RUN if [ "$WITH_LLAMA" = 1 ]; then \
        apt-get update \
        && apt-get install -y --no-install-recommends build-essential cmake git \
        && rm -rf /var/lib/apt/lists/*; \
    fi
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH PIP_NO_CACHE_DIR=1
# The CPU build of torch: a plain `torch` from PyPI is a CUDA build of several GB.
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0
COPY requirements.txt requirements-llama.txt /src/
RUN pip install -r /src/requirements.txt
# llama-cpp-python compiles for 8–25 min. An x86-64 build for any AVX2 CPU rather than
# -march=native (the image runs on other machines); ARM builds take llama.cpp's defaults. Pass
# --build-arg CMAKE_ARGS=... for a GPU build.
ARG CMAKE_ARGS=""
RUN if [ "$WITH_LLAMA" = 1 ]; then \
        if [ -z "$CMAKE_ARGS" ] && [ "$(uname -m)" = x86_64 ]; then \
            export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"; \
        fi \
        && pip install -r /src/requirements-llama.txt; \
    fi
COPY pyproject.toml README.md LICENSE /src/
COPY memory_cortex /src/memory_cortex
COPY middleware /src/middleware
RUN pip install --no-deps /src

# -- run ------------------------------------------------------------------------------------------
FROM python:3.11-slim-bookworm
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgomp1 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin cortex \
    && mkdir -p /data /etc/memory-cortex \
    && chown cortex:cortex /data
COPY --from=build /opt/venv /opt/venv
COPY memory_cortex/config_example.yaml /etc/memory-cortex/config.yaml
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    XDG_CACHE_HOME=/data/cache \
    MEMORY_CORTEX_SERVER__HOST=0.0.0.0 \
    MEMORY_CORTEX_DATABASE__PATH=/data/memory-cortex.db \
    MEMORY_CORTEX_LLM__MODELS_DIR=/data/models
# Every relative path of the configuration lands in the volume too.
WORKDIR /data
USER cortex
VOLUME ["/data"]
EXPOSE 8300
# Listening on 0.0.0.0 makes server.api_token mandatory: compose.yaml passes MEMORY_CORTEX_API_TOKEN.
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8300/health', timeout=4)"]
CMD ["memory-cortex", "serve", "--config", "/etc/memory-cortex/config.yaml"]
