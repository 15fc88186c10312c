#!/usr/bin/env python3
"""The fault probes of docs/reliability.md: each injects one fault into a
small zeroc run (examples/mlp.mlir on 2 CPU ranks, or the tests' stand-in
program) and prints what happened, as a Markdown table row: the exit
status, the seconds until the job ended, the first error line, and whether
the last checkpoint survived.

    python3 benchmarks/fault_probes.py [--build build] [--work DIR]

Standard library only; needs mpirun and a built tree. Takes about two
minutes (the timeout probes wait --collective-timeout 5 s each).
"""

import argparse
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from zeroc import checkpoint  # noqa: E402
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
          "-x", "OMP_NUM_THREADS=1"]


def first_error(text):
    for line in text.splitlines():
        if "error" in line.lower() or "warning" in line.lower():
            return line.strip()
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("-")]
    return lines[-1].strip() if lines else "(nothing printed)"


def rank_pid(executable, rank, deadline=30):
    """The pid of `rank` of a running mpirun job of `executable`."""
    end = time.time() + deadline
    while time.time() < end:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
                with open(f"/proc/{pid}/environ", "rb") as f:
                    env = f.read().split(b"\0")
            except OSError:
                continue
            if argv and os.path.basename(argv[0].decode()) == os.path.basename(executable) and \
                    f"OMPI_COMM_WORLD_RANK={rank}".encode() in env:
                return int(pid)
        time.sleep(0.05)
    return None


class Probe:
    def __init__(self, work, build):
        self.work, self.build = work, build
        self.rows = []

    def path(self, name):
        return os.path.join(self.work, name)

    def run(self, command, inject=None, timeout=120):
        """Runs `command`; `inject(process)` runs meanwhile. Returns (status,
        seconds from the injection, or from the start, to the end, output)."""
        start = time.time()
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   cwd=self.work, start_new_session=True)
        injected = start
        if inject:
            injected = inject(process) or time.time()
        try:
            output, _ = process.communicate(timeout=timeout)
            status = process.returncode
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            status = "hang (killed after %d s)" % timeout
        return status, time.time() - injected, output.decode(errors="replace")

    def row(self, fault, status, seconds, output, checkpoint="-"):
        self.rows.append(f"| {fault} | {status} | {seconds:.1f} s | `{first_error(output)}` | {checkpoint} |")
        print(self.rows[-1], flush=True)

    def checkpoint_intact(self, directory, reference):
        """Whether every step folder of `reference` is still in `directory`
        byte for byte, and what `latest` names there (verified)."""
        if not os.path.isdir(directory):
            return "none"
        for root, _, files in os.walk(reference):
            for name in files:
                mine = os.path.join(directory, os.path.relpath(root, reference), name)
                if name == "latest":
                    continue
                if not os.path.exists(mine) or \
                        open(mine, "rb").read() != open(os.path.join(root, name), "rb").read():
                    return "CHANGED"
        try:
            latest = checkpoint.resolve(directory)
            checkpoint.verify(latest)
        except checkpoint.CheckpointError as error:
            return f"latest does not verify: {error}"
        return f"intact; latest = {os.path.basename(latest)} (verifies)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--work")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="zeroc-faults-")
    os.makedirs(work, exist_ok=True)
    bin_dir = os.path.join(args.build, "bin")
    probe = Probe(work, args.build)
    zeroc = os.path.join(bin_dir, "zeroc")

    with open(probe.path("tokens.bin"), "wb") as f:
        f.write(b"".join(struct.pack("<H", (i * 7 + i // 3) % 37) for i in range(4000)))
    mlp = os.path.join(ROOT, "examples", "mlp.mlir")
    subprocess.run([zeroc, mlp, "--zero-stage=2", "--world-size=2", "-o", probe.path("mlp")], check=True)
    long_run = MPIRUN + ["-np", "2", "./mlp", "--data", "tokens.bin", "--steps", "100000000",
                         "--quiet", "--collective-timeout", "5"]
    subprocess.run(MPIRUN + ["-np", "2", "./mlp", "--data", "tokens.bin", "--steps", "3",
                             "--save", "good", "--quiet"], cwd=work, check=True)

    def signal_rank(sig, rank, after):
        def inject(process):
            pid = rank_pid("mlp", rank)
            time.sleep(after)
            os.kill(pid, sig)
            return time.time()
        return inject

    def signal_mpirun(sig, after):
        def inject(process):
            rank_pid("mlp", 0)
            time.sleep(after)
            os.kill(process.pid, sig)
            return time.time()
        return inject

    print("| fault | exit status | until the job ended | first message | checkpoint |")
    print("|---|---|---|---|---|")
    for sig, name in ((signal.SIGKILL, "killed (SIGKILL)"), (signal.SIGSTOP, "stopped (SIGSTOP)")):
        status, seconds, output = probe.run(long_run, signal_rank(sig, 1, 0.0))
        probe.row(f"rank 1 {name} at start-up", status, seconds, output)
        status, seconds, output = probe.run(long_run, signal_rank(sig, 1, 3.0))
        probe.row(f"rank 1 {name} while training", status, seconds, output)
    # Resume + save into the good checkpoint, with a rank killed meanwhile.
    shutil.copytree(probe.path("good"), probe.path("ck"))
    resume = MPIRUN + ["-np", "2", "./mlp", "--data", "tokens.bin", "--steps", "100000000",
                       "--resume", "ck", "--save", "ck", "--quiet", "--collective-timeout", "5"]
    status, seconds, output = probe.run(resume, signal_rank(signal.SIGKILL, 0, 2.0))
    probe.row("rank 0 killed while training with --save", status, seconds, output,
              probe.checkpoint_intact(probe.path("ck"), probe.path("good")))
    for sig, name in ((signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")):
        shutil.rmtree(probe.path("ck"))
        shutil.copytree(probe.path("good"), probe.path("ck"))
        status, seconds, output = probe.run(resume, signal_mpirun(sig, 3.0))
        probe.row(f"{name} to mpirun while training with --save", status, seconds, output,
                  probe.checkpoint_intact(probe.path("ck"), probe.path("good")))

    # Damaged files.
    def damaged(name, mutate):
        shutil.rmtree(probe.path("ck"), ignore_errors=True)
        shutil.copytree(probe.path("good"), probe.path("ck"))
        mutate(probe.path("ck"))
        status, seconds, output = probe.run(MPIRUN + ["-np", "2", "./mlp", "--data", "tokens.bin",
                                                      "--steps", "6", "--resume", "ck",
                                                      "--quiet"])
        probe.row(name, status, seconds, output)

    def step_file(directory, name):
        return os.path.join(checkpoint.resolve(directory), name)

    def truncate(directory):
        path = step_file(directory, "model.rank1.safetensors")
        os.truncate(path, os.path.getsize(path) // 2)

    def corrupt_header(directory):
        path = step_file(directory, "model.rank0.safetensors")
        data = bytearray(open(path, "rb").read())
        data[20:28] = b"\xff" * 8
        open(path, "wb").write(bytes(data))

    def missing(directory):
        os.remove(step_file(directory, "optimizer.rank1.safetensors"))

    damaged("checkpoint truncated (a rank's model file cut in half)", truncate)
    damaged("checkpoint corrupt (8 bytes of a header overwritten)", corrupt_header)
    damaged("checkpoint incomplete (a rank's optimizer file missing)", missing)

    # Weights with aliased data_offsets (from the checkpoint's export).
    good = probe.path("good.safetensors")
    checkpoint.export(probe.path("good"), good)
    data = open(good, "rb").read()
    (size,) = struct.unpack("<Q", data[:8])
    import json
    header = json.loads(data[8:8 + size])
    first = next(name for name in header if name != "__metadata__")
    second = [name for name in header if name not in ("__metadata__", first)][0]
    header[second]["data_offsets"] = [header[first]["data_offsets"][0],
                                      header[first]["data_offsets"][0] +
                                      header[second]["data_offsets"][1] -
                                      header[second]["data_offsets"][0]]
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    open(probe.path("aliased.safetensors"), "wb").write(struct.pack("<Q", len(text)) + text +
                                                         data[8 + size:])
    status, seconds, output = probe.run(MPIRUN + ["-np", "2", "./mlp", "--data", "tokens.bin",
                                                  "--steps", "2", "--init", "aliased.safetensors",
                                                  "--quiet"])
    probe.row("--init weights with aliased data_offsets", status, seconds, output)

    with open(probe.path("odd.bin"), "wb") as f:
        f.write(b"\1" * 1001)
    status, seconds, output = probe.run(MPIRUN + ["-np", "2", "./mlp", "--data", "odd.bin", "--quiet"])
    probe.row("token file truncated (odd byte count)", status, seconds, output)

    # Divergence, into the good checkpoint.
    diverge = probe.path("diverge.mlir")
    with open(mlp) as f, open(diverge, "w") as out:
        for line in f:
            out.write("  train.optimizer sgd lr = 1.0e+04\n" if "train.optimizer" in line else line)
    subprocess.run([zeroc, diverge, "--zero-stage=2", "--world-size=2", "-o",
                    probe.path("diverge")], check=True)
    shutil.rmtree(probe.path("ck"), ignore_errors=True)
    subprocess.run(MPIRUN + ["-np", "2", "./diverge", "--data", "tokens.bin", "--steps", "1",
                             "--save", "ck", "--quiet"], cwd=work, check=True)
    shutil.rmtree(probe.path("ck-before"), ignore_errors=True)
    shutil.copytree(probe.path("ck"), probe.path("ck-before"))
    status, seconds, output = probe.run(MPIRUN + ["-np", "2", "./diverge", "--data", "tokens.bin",
                                                  "--steps", "40", "--resume", "ck", "--save",
                                                  "ck", "--quiet"])
    probe.row("divergence (SGD at lr 1e4) with --save", status, seconds, output,
              probe.checkpoint_intact(probe.path("ck"), probe.path("ck-before")))

    # Outputs to a device (a copy of /dev/null made with mknod, as root).
    if os.geteuid() == 0:
        null = probe.path("null")
        os.mknod(null, 0o666 | 0o020000, os.makedev(1, 3))
        status, seconds, output = probe.run([zeroc, mlp, "--emit=source", "-o", null])
        kind = "a character device" if os.path.exists(null) and \
            (os.stat(null).st_mode & 0o170000) == 0o020000 else "DESTROYED"
        probe.row("`zeroc -o` a device (mknod c 1 3)", status, seconds, output or kind,
                  f"still {kind}")
    print(f"\n(work directory: {work})")


if __name__ == "__main__":
    main()
