"""Keep libiec61850's debug printf output (it hex-dumps every R-Session message, including the
plaintext before encryption) off our stdout, which carries JSON."""
from __future__ import annotations

import contextlib
import os
import sys


@contextlib.contextmanager
def quiet_stdout(log_path: str | None = None):
    """Point fd 1 at ``log_path`` (or /dev/null) for the duration; yield a writer for real stdout."""
    sys.stdout.flush()
    saved = os.dup(1)
    target = os.open(log_path or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(target, 1)
    os.close(target)
    real = os.fdopen(os.dup(saved), "w", buffering=1)
    try:
        yield real
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        real.close()
