"""Record the golden corpus: run every command in commands.txt and keep what it printed.

Run it only after a deliberate change of output, and say in the commit which outputs changed
and why; tests/test_golden.py holds every later run to these files.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpus import OUTPUTS, commands, output_name, run  # noqa: E402


def main() -> None:
    OUTPUTS.mkdir(exist_ok=True)
    keep = set()
    for number, command in enumerate(commands(), 1):
        name = output_name(number, command)
        keep.add(name)
        (OUTPUTS / name).write_text(run(command), encoding="utf-8")
    for stale in OUTPUTS.iterdir():
        if stale.name not in keep:
            stale.unlink()
    print(f"recorded {len(keep)} commands in {OUTPUTS}")


if __name__ == "__main__":
    main()
