# Leave channels for a concurrent run to find: /dev/shm, /tmp, a lock, SysV shm,
# an abstract unix socket, a session keyring key (refused by seccomp).
import ctypes, fcntl, os, socket, time
open("/dev/shm/gojail-channel", "w").write("hello")
open("/tmp/gojail-channel", "w").write("hello")
lock = open("/tmp/gojail-lock", "w"); fcntl.flock(lock, fcntl.LOCK_EX)
libc = ctypes.CDLL(None, use_errno=True)
shmid = libc.shmget(0x6A11, 4096, 0o1666)
s = socket.socket(socket.AF_UNIX); s.bind("\0gojail-channel"); s.listen()
print("ready", shmid >= 0, flush=True)
time.sleep(3)
