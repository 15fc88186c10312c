#!/usr/bin/env python3
"""Rewrites a CUDA C++ file into C++ for the CPU emulation of CUDA.

    rewrite.py in.cu out.cpp

Three mechanical changes, nothing else (docs/cuda.md):
  * a launch `kernel<<<grid, block[, shared[, stream]]>>>(args)` becomes
    `zc_emu::makeLauncher(kernel, "kernel", grid, block[, ...])(args)`;
  * a dynamic shared array `extern __shared__ [__align__(n)] T name[];`
    becomes `T *name = static_cast<T *>(zc_emu::dynamicShared());`;
  * a static shared declaration `__shared__ T a[n], b[m];` is followed by
    `zc_emu::sharedStatic(a, sizeof(a)); ...`, which fills it with 0xff
    bytes when the block's first thread gets there (shared memory starts
    undefined in every block, not with the previous block's values).
A `#line` directive keeps compiler messages pointing at the .cu file. Fails
(exit 1, naming the file and line) on a `<<<` it cannot parse.
"""

import re
import sys

LAUNCH = re.compile(r"([A-Za-z_][\w:]*(?:<[^<>;]*>)?)\s*<<<")
SHARED = re.compile(
    r"extern\s+__shared__\s+(?:__align__\(\s*\d+\s*\)\s+)?([\w\s:]+?)\s+(\w+)\s*\[\s*\]\s*;")


STATIC_SHARED = re.compile(r"(?<!extern )__shared__\s+([^;]*);")


def poison_static(m):
    decl = m.group(1)
    names = re.findall(r"(\w+)\s*\[", decl) or [decl.split()[-1]]
    calls = " ".join(f"zc_emu::sharedStatic(&{n}, sizeof({n}));" for n in names)
    return f"{m.group(0)} {calls}"


def rewrite(text, path):
    out = []
    pos = 0
    while True:
        m = LAUNCH.search(text, pos)
        if not m:
            out.append(text[pos:])
            break
        end = text.find(">>>", m.end())
        if end < 0 or not text[end + 3:].lstrip().startswith("("):
            line = text.count("\n", 0, m.start()) + 1
            sys.exit(f"rewrite.py: {path}:{line}: a <<< without >>>(")
        kernel = m.group(1)
        config = text[m.end():end]
        name = re.sub(r"\s+", " ", kernel)
        out.append(text[pos:m.start()])
        out.append(f'zc_emu::makeLauncher({kernel}, "{name}", {config})')
        pos = end + 3
    text = "".join(out)
    text = SHARED.sub(
        lambda m: f"{m.group(1)} *{m.group(2)} = "
        f"static_cast<{m.group(1)} *>(zc_emu::dynamicShared());", text)
    return STATIC_SHARED.sub(poison_static, text)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: rewrite.py in.cu out.cpp")
    src, dst = sys.argv[1], sys.argv[2]
    with open(src) as f:
        text = f.read()
    result = f'#line 1 "{src}"\n' + rewrite(text, src)
    with open(dst, "w") as f:
        f.write(result)


if __name__ == "__main__":
    main()
