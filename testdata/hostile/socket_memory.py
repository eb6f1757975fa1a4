# Memory that belongs to no process: unix socket buffers filled by many
# processes. The cgroup charges it; the OOM killer must pick the program's
# processes, never the jail's init, so the verdict stays exact.
import os, socket
for _ in range(32):
    if os.fork() == 0:
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
            os._exit(0)
os.wait()
