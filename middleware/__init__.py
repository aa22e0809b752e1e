"""The old import name of Memory Cortex, kept so that ``python -m middleware`` still starts it.

The package is :mod:`memory_cortex` since 0.2.0; the command is ``memory-cortex``. Installed
systemd units and scripts that still say ``python -m middleware`` keep working through
``middleware/__main__.py`` and print a one-line notice. This shim goes away in 0.4.0.
"""
