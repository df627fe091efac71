"""Helpers for the serve tests: a free port, `ringsim serve` as a subprocess, PNG pixels."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import time
import urllib.request

import numpy as np

from devtools import free_port, stop  # noqa: F401 (the serve tests import them from here)


@contextlib.contextmanager
def serving(*args: str, timeout: float = 30):
    """`ringsim serve --port P ARGS` running until the block ends; yields (port, first page)."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "ringsim", "serve", "--port", str(port), *args],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + timeout
        page = None
        while time.monotonic() < deadline and page is None:
            if server.poll() is not None:
                raise AssertionError(f"ringsim serve exited: {server.stderr.read().decode()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                    page = response.read().decode()
            except OSError:
                time.sleep(0.2)
        assert page is not None, f"no answer within {timeout} s"
        yield port, page
    finally:
        stop(server)


def png_pixels(data: bytes) -> np.ndarray:
    """A PNG (Chromium's screenshot) as an H×W×3 array of 8-bit RGB, read by Pillow."""
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def count_colour(pixels: np.ndarray, hex_colour: str, tolerance: int = 4) -> int:
    """How many pixels are within `tolerance` of a colour in every channel."""
    rgb = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=np.int32)
    return int((np.abs(pixels.astype(np.int32) - rgb) <= tolerance).all(axis=2).sum())
