"""The course ships in the wheel: a plain (non-editable) install lists and runs every lesson."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_installed_wheel_ships_the_lessons(tmp_path):
    # Build without isolation or network: hatchling is installed with the test extras.
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--no-index", "-q", "-w", str(wheels), str(REPO)], check=True, timeout=120)
    (wheel,) = wheels.glob("ringsim-*.whl")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                    "--no-index", "-q", str(wheel)], check=True, timeout=120)
    # NumPy (and the rest) come from the test environment's site-packages as a plain path
    # entry: its .pth files, among them the editable ringsim, are not processed there.
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONIOENCODING"] = "utf-8"
    run = lambda *args: subprocess.run([str(env_dir / "bin" / "ringsim"), *args], cwd=tmp_path,  # noqa: E731
                                       env=env, capture_output=True, text=True, encoding="utf-8",
                                       stdin=subprocess.DEVNULL, timeout=120)
    where = subprocess.run([str(python), "-c", "import ringsim.lessons as l; print(l.default_directory())"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()) == site / "ringsim" / "_lessons"
    listing = run("lesson")
    assert listing.returncode == 0, listing.stderr
    numbers = [line.split()[0] for line in listing.stdout.splitlines() if line[:3].strip().isdigit()]
    assert numbers == [str(n) for n in range(1, 20)]
    lesson = run("lesson", "5")
    assert lesson.returncode == 0, lesson.stderr
    assert "GPU1 sends a₁ to GPU2, where it is added to b₁" in lesson.stdout
