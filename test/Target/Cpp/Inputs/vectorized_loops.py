"""Checks that the C++ compiler vectorizes the generated elementwise loops.

    vectorized_loops.py SOURCE.cpp INCLUDE_DIR HELPER [HELPER...]

Compiles SOURCE.cpp the way zeroc does (mpicxx -O3 -march=native -fopenmp),
and again for AVX2 with FMA (-march=x86-64-v3) so that the result does not
depend on the machine the test runs on, each time with the compiler's
vectorization remarks on, and finds every elementwise
loop body (`x[i] = ...;`). It fails, naming the line, when the compiler did
not vectorize a loop of 16 elements or more, or when no loop applies one of
the HELPERs (the preamble's transcendental functions: zc_gelu_tanh,
zc_silu, ...). It prints how many loops it checked and how many loops call
each HELPER. GCC reports through -fopt-info-vec-optimized, clang through
-Rpass=loop-vectorize.
"""
import re
import subprocess
import sys


def main():
    source, include, helpers = sys.argv[1], sys.argv[2], sys.argv[3:]
    compiler = "mpicxx"
    version = subprocess.run([compiler, "--version"], capture_output=True,
                             text=True, check=True).stdout
    remark = ["-Rpass=loop-vectorize"] if "clang" in version else \
        ["-fopt-info-vec-optimized"]
    failures = []
    for march in ("native", "x86-64-v3"):
        checked, found = check(compiler, remark, march, source, include, helpers,
                               failures)
    if failures:
        sys.exit("\n".join(failures))
    print(f"vectorized: {checked} loops;",
          ", ".join(f"{n} x{c}" for n, c in sorted(found.items())))


def check(compiler, remark, march, source, include, helpers, failures):
    """Compiles for -march=MARCH; adds a message to `failures` per loop not
    vectorized. Returns the loops checked and the count per helper."""
    done = subprocess.run(
        [compiler, "-std=c++17", "-O3", f"-march={march}", "-fopenmp",
         "-I" + include, "-c", source, "-o", "/dev/null"] + remark,
        capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{source}: the compiler failed:\n{done.stderr}")
    base = re.escape(source.rsplit("/", 1)[-1])
    vectorized = set()
    for line in done.stderr.splitlines():
        match = re.match(r".*?" + base + r":(\d+):\d+: (?:optimized|remark): "
                         r"(?:loop vectorized|vectorized loop)", line)
        if match:
            vectorized.add(int(match.group(1)))
    call = re.compile(r"\b(" + "|".join(map(re.escape, helpers)) + r")\(")
    body = re.compile(r"^\s*\S+\[i\] = ")
    trips = re.compile(r"for \(int64_t [a-z] = 0; [a-z] < (\d+); ")
    found = {h: 0 for h in helpers}
    checked = 0
    with open(source) as f:
        lines = f.read().splitlines()
    for number, text in enumerate(lines, 1):
        if not body.match(text):
            continue
        # The loops enclosing the body (one, or rows and their elements);
        # the remark names the innermost one's header or a line of its body.
        header = number - 1
        while header > 0 and "for (int64_t" not in lines[header - 1]:
            header -= 1
        elements = 1
        for line in lines[max(0, header - 4):header]:
            trip = trips.search(line)
            if trip:
                elements *= int(trip.group(1))
        for name in set(call.findall(text)):
            found[name] += 1
        if elements < 16:
            continue
        checked += 1
        if not set(range(header, number + 1)) & vectorized:
            failures.append(f"{source}:{number}: not vectorized for -march={march}: "
                            f"{text.strip()}")
    for name, count in found.items():
        if count == 0:
            failures.append(f"{source}: no loop calls {name}")
    return checked, found


if __name__ == "__main__":
    main()
