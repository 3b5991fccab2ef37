"""Which corpus files build for which target, and the first error of each failure.

Run ``python tests/dxc/report.py``; the counts are the issue-6 note's "how many build per target".
It reports the compiler's own verdict only; the tests check that what builds is also right.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from dxc_build import build
from dxc_cases import CASES, case_id

from oneshader.reflection.model import Target


def main() -> int:
    for target in Target:
        ok = 0
        lines = []
        for case in CASES:
            built = build(case, (target,))
            if built.reflection is not None:
                ok += 1
                if case.error and target in case.error_targets:
                    lines.append(f"  {case_id(case):<24} [BUG] builds, but must fail")
                continue
            first = built.errors[0].format() if built.errors else "no diagnostic"
            verdict = (
                "expected" if case.error else ("allowed" if target in case.may_fail else "BUG")
            )
            lines.append(f"  {case_id(case):<24} [{verdict}] {first}")
        print(f"{target.name}: {ok} of {len(CASES)} build")
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
