"""mypy with a ratchet: the number of mypy errors in src/ may only go down.

`python tools/mypy_ratchet.py` runs mypy on src/tensorweave and compares the error count with
the one recorded in tools/mypy_ratchet.txt: more fails (listing the errors), fewer passes and
asks to lower the record (`--update` writes it).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "tools" / "mypy_ratchet.txt"


def run_mypy() -> tuple[int, str]:
    out = subprocess.run([sys.executable, "-m", "mypy", "src/tensorweave"], cwd=ROOT,
                         capture_output=True, text=True, timeout=1800).stdout
    m = re.search(r"Found (\d+) errors?", out)
    return (int(m.group(1)) if m else 0), out


def main(argv: list[str]) -> int:
    found, out = run_mypy()
    allowed = int(RECORD.read_text().split()[0])
    if "--update" in argv and found <= allowed:
        RECORD.write_text(f"{found}\n")
        print(f"mypy ratchet: recorded {found} errors")
        return 0
    if found > allowed:
        print(out)
        print(f"mypy ratchet: {found} errors, more than the {allowed} recorded in "
              f"{RECORD.relative_to(ROOT)}: fix the new ones")
        return 1
    if found < allowed:
        print(f"mypy ratchet: {found} errors (recorded {allowed}): lower the record with "
              f"`python tools/mypy_ratchet.py --update`")
    else:
        print(f"mypy ratchet: {found} errors, as recorded")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
