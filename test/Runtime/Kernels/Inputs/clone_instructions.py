"""Counts the packed (vector) floating-point instructions in one ISA clone
of a CPU kernel.

    clone_instructions.py LIBRARY FUNCTION CLONE

Disassembles LIBRARY (objdump -d -C), finds the function whose demangled
name contains FUNCTION and ends with `[clone .CLONE]` (GCC's target_clones:
arch_x86_64_v4, arch_x86_64_v3, default), and prints
`CLONE: N fma, M packed` -- the fused multiply-adds on vector registers
(vfmadd...ps, vfnmadd...ps) and all packed single-precision arithmetic
(add, sub, mul, div, fma on ps). A loop the compiler left scalar shows as
ss instructions instead, so the counts say whether the clone vectorized.
"""
import re
import subprocess
import sys


def main():
    library, function, clone = sys.argv[1:4]
    text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", library],
                          capture_output=True, text=True, check=True).stdout
    body, inside = [], False
    for line in text.splitlines():
        if line.endswith(">:"):
            inside = function in line and line.endswith(f"[clone .{clone}]>:")
            continue
        if inside:
            body.append(line)
    if not body:
        sys.exit(f"{library}: no clone .{clone} of {function}")
    fma = packed = 0
    for line in body:
        match = re.search(r"\s(v?f?n?m?(?:add|sub|mul|div)\d*ps)\s", line)
        if not match:
            continue
        packed += 1
        if "fmadd" in match.group(1) or "fmsub" in match.group(1):
            fma += 1
    print(f"{clone}: {fma} fma, {packed} packed")


if __name__ == "__main__":
    main()
