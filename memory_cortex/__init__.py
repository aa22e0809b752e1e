"""Memory Cortex: a small, fast, self-hosted long-term memory daemon for LLM agents."""

__version__ = "0.2.0"
