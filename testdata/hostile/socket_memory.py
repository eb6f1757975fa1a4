# Memory that belongs to no process: unix socket buffers filled by many
# processes. The cgroup charges it; the OOM killer must pick the program's
# processes, never the jail's init, so the verdict stays exact.
#
# Every process holds what it filled until the end, so 32 of them (about
# 30 MiB each under 256 open files) must overrun a 256 MiB limit, and the
# parent holds the most resident memory, so it is the OOM killer's choice:
# the run can only end by the parent's OOM kill (or by a limit on time).
import os, signal, socket

def fill():
    keep = []
    try:
        while True:
            a, b = socket.socketpair()
            a.setblocking(False)
            keep.append((a, b))
            try:
                while True:
                    a.send(b"x" * 65536)
            except BlockingIOError:
                pass
    except OSError:
        pass
    return keep

go, start = os.pipe()
for _ in range(32):
    if os.fork() == 0:
        os.close(start)
        os.read(go, 1)  # until the parent holds its ballast
        held = fill()
        while True:
            signal.pause()
ballast = bytearray(48 << 20)
for i in range(0, len(ballast), 4096):
    ballast[i] = 1
os.close(start)
held = fill()
while True:
    os.wait()
