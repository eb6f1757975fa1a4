# Look for what a concurrent run left (see ipc_writer.py).
import ctypes, os, socket, time
time.sleep(1)
print("shm file", os.path.exists("/dev/shm/gojail-channel"))
print("tmp file", os.path.exists("/tmp/gojail-channel"))
libc = ctypes.CDLL(None, use_errno=True)
print("sysv shm", libc.shmget(0x6A11, 4096, 0o666) >= 0)
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\0gojail-channel"); print("abstract socket connected")
except OSError as e:
    print("abstract socket", type(e).__name__)
print("processes", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
