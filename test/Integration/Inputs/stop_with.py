"""Runs a command, sends it a signal (INT, TERM, USR1) once its first
progress line is out, and passes its output on; exits with its status.

    python3 stop_with.py INT EXE ARGS...
"""
import signal
import subprocess
import sys


def main():
    sig = getattr(signal, "SIG" + sys.argv[1])
    proc = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines = []
    sent = False
    for line in proc.stdout:
        lines.append(line)
        if not sent and line.startswith(b"step "):
            proc.send_signal(sig)
            sent = True
    status = proc.wait()
    sys.stdout.buffer.write(b"".join(lines))
    sys.exit(status)


if __name__ == "__main__":
    main()
