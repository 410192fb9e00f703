#!/usr/bin/env python3
"""readme_blocks.py README SCRIPT EXPECTED -- the blocks of compat/README.md that
compat/ci.sh runs as written.

A block is run when the line before its fence is `<!-- compat/ci.sh runs this block -->`.
Its `sh` blocks go into SCRIPT verbatim, in order, so what one exports the next sees; a
`python` block runs through "$PYTHON" (the interpreter that has gpib-ctypes). What the
README shows a block printing goes into EXPECTED: in `sh`, the comment-only lines after a
command (`# pad=5 idn=...`); in `python`, the comment at the end of each `print(...)`
line. compat/ci.sh runs SCRIPT and compares its standard output with EXPECTED.
"""

import re
import sys

MARK = "<!-- compat/ci.sh runs this block -->"


def blocks(text):
    lines = text.split("\n")
    out = []
    i = 0
    prev = ""
    while i < len(lines):
        m = re.match(r"^```(\w*)", lines[i])
        if m:
            lang = m.group(1)
            body = []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            if prev.strip() == MARK:
                out.append((lang, body))
        elif lines[i].strip():
            prev = lines[i]
        i += 1
    return out


def main():
    readme, script_path, expected_path = sys.argv[1:4]
    script = ["set -euo pipefail"]
    expected = []
    found = blocks(open(readme).read())
    if not found:
        sys.exit(f"{readme}: no block is marked {MARK}")
    for lang, body in found:
        if lang == "sh":
            script.extend(body)
            expected.extend(
                l.strip()[1:].strip() for l in body if l.strip().startswith("#") and not l.startswith("#!")
            )
        elif lang == "python":
            script.append('"$PYTHON" - <<\'PY\'')
            script.extend(body)
            script.append("PY")
            for l in body:
                m = re.match(r"^\s*print\(.*\)\s*#\s*(.*)$", l)
                if m:
                    expected.append(m.group(1))
        else:
            sys.exit(f"{readme}: a marked block of language {lang!r}: only sh and python run")
    open(script_path, "w").write("\n".join(script) + "\n")
    open(expected_path, "w").write("".join(e + "\n" for e in expected))
    print(f"{len(found)} block(s), {len(expected)} line(s) of output expected")


main()
