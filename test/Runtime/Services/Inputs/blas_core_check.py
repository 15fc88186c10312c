"""Checks the blas_core of runs' summaries (blas-core.test).

    blas_core_check.py OWN USER

OWN and USER are --log-json files of the same program run without
OPENBLAS_CORETYPE and with OPENBLAS_CORETYPE=Prescott. OWN's core must be
a name the OpenBLAS library the program loaded knows (its core table), and
USER's must be Prescott.
"""
import json
import re
import subprocess
import sys


def core(path):
    with open(path) as f:
        summary = [json.loads(line) for line in f if '"summary"' in line][-1]
    return summary.get("blas_core")


def library():
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    match = re.search(r"libopenblas\.so\.0 .*=> (\S+)", out)
    return match.group(1) if match else None


def main():
    own, user = core(sys.argv[1]), core(sys.argv[2])
    failures = []
    path = library()
    names = set()
    if path:
        with open(path, "rb") as f:
            names = {w.decode().lower() for w in re.findall(rb"[A-Za-z][A-Za-z0-9]{2,15}", f.read())}
    if not own or (names and own.lower() not in names):
        failures.append(f"OpenBLAS's own pick: {own!r}, not a core name of {path}")
    if user != "Prescott":
        failures.append(f"OPENBLAS_CORETYPE=Prescott: the summary says {user!r}")
    if failures:
        sys.exit("\n".join(failures))
    print(f"blas core: OpenBLAS's own pick {own}, OPENBLAS_CORETYPE=Prescott wins")


if __name__ == "__main__":
    main()
