"""Run the code blocks of one Markdown page as printed (used by tests/docs/test_doc_snippets.py).

    python tests/doc_snippets.py PAGE.md [DATA_DIR]

Run in a working directory that holds the files the snippets read (the test
makes it). The rules, which the docs follow:

* Every ```python block runs, in page order, in one namespace per page: a
  reader who follows the page from the top has the names the earlier blocks
  made. Nothing else is defined for them.
* A ```bash block runs when it calls ``irmeasures-markov`` (as
  ``python -m irmeasures_markov.cli``, the same program); other shell blocks
  (``pip``, ``dask``, ``ir_measures`` needing an installed hook) are not run.
* A block right after ``<!-- not-run: REASON -->`` is an excerpt and is not
  run; a block right after ``<!-- needs-data -->`` needs the TREC data
  (``IRMEASURES_MARKOV_DATA``, else ``../shared/data``) and is skipped, with
  that reason, when it is absent; a block right after
  ``<!-- needs-module: NAME -->`` needs an optional dependency (one of the
  test extra: CI runs it) and is skipped when NAME cannot be imported.

Prints one line per block (``RAN``, ``SKIP reason`` or ``FAIL`` with the
traceback) and exits 1 if any block failed. Python tracebacks name the page
and its line numbers (the code is compiled at its place in the page).
"""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import traceback
import warnings
from pathlib import Path
from typing import NamedTuple

FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
MARK = re.compile(r"^\s*<!--\s*(not-run|needs-data|needs-module)\s*:?\s*(.*?)\s*-->\s*$")
RUN_SHELL = ("bash", "sh", "shell")


class Block(NamedTuple):
    lang: str
    line: int  # 1-based line of the first code line
    code: str
    mark: str | None  # 'not-run' / 'needs-data' / 'needs-module' / None
    reason: str


def blocks(text: str) -> list[Block]:
    lines = text.splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group(2):
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        mark = MARK.match(lines[j]) if j >= 0 else None
        body, k = [], i + 1
        while k < len(lines) and lines[k].strip() != "```":
            body.append(lines[k][len(indent):] if lines[k].startswith(indent) else lines[k].lstrip())
            k += 1
        out.append(Block(lang, i + 2, "\n".join(body) + "\n",
                         mark.group(1) if mark else None, mark.group(2) if mark else ""))
        i = k + 1
    return out


def runs_in_shell(code: str) -> bool:
    return re.search(r"(^|[|;&]\s*)irmeasures-markov\b", code, re.M) is not None


def main(argv: list[str]) -> int:
    page = Path(argv[0])
    data = argv[1] if len(argv) > 1 and argv[1] else None
    ns = {"__name__": "__main__"}
    failed = 0
    for b in blocks(page.read_text(encoding="utf-8")):
        where = f"{page.name}:{b.line}"
        if b.lang not in ("python",) + RUN_SHELL:
            continue
        if b.lang in RUN_SHELL and not runs_in_shell(b.code):
            continue
        if b.mark == "not-run":
            print(f"SKIP {where} not-run: {b.reason}", flush=True)
            continue
        if b.mark == "needs-data" and not data:
            print(f"SKIP {where} needs the TREC data", flush=True)
            continue
        if b.mark == "needs-module" and importlib.util.find_spec(b.reason) is None:
            print(f"SKIP {where} needs {b.reason}", flush=True)
            continue
        if b.lang == "python":
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    exec(compile("\n" * (b.line - 1) + b.code, str(page), "exec"), ns)
            except BaseException:  # noqa: BLE001 - report every failure, SystemExit included
                failed += 1
                print(f"FAIL {where} (python block)\n{traceback.format_exc()}", flush=True)
                continue
        else:
            script = (f'irmeasures-markov() {{ "{sys.executable}" -m irmeasures_markov.cli "$@"; }}\n'
                      'set -e -o pipefail\n') + b.code
            proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                                  stdin=subprocess.DEVNULL, env=os.environ)
            if proc.returncode != 0:
                failed += 1
                print(f"FAIL {where} (bash block, exit {proc.returncode})\n{proc.stdout[-1500:]}"
                      f"\n{proc.stderr[-1500:]}", flush=True)
                continue
        print(f"RAN  {where}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
