"""Runs a command and prints the CPU seconds of its calling thread apart
from the whole process's, as filter_serial.sh needs them.

    python3 thread_times.py CMD [ARG...]

prints "CALLER_USER CALLER_SYS ALL_USER ALL_SYS" (seconds, the kernel's
per-thread accounting of /proc/PID/task/PID/stat and /proc/PID/stat) and
exits with the command's status. The child is waited for with WNOWAIT, so
that it stays a zombie while its figures are read: the calling thread's own
times exist only until the process is reaped, and by then every other
thread's times are in the process's total. The command's standard output
goes to /dev/null.
"""

import os
import sys


def times(path, tick):
    """User and system seconds of a /proc stat file (fields 14 and 15)."""
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / tick, int(fields[12]) / tick


def main():
    if len(sys.argv) < 2:
        print("usage: thread_times.py CMD [ARG...]", file=sys.stderr)
        return 2
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        try:
            os.execvp(sys.argv[1], sys.argv[1:])
        finally:
            os._exit(127)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    tick = os.sysconf("SC_CLK_TCK")
    caller = times(f"/proc/{pid}/task/{pid}/stat", tick)
    whole = times(f"/proc/{pid}/stat", tick)
    _, status = os.waitpid(pid, 0)
    print(*caller, *whole)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
