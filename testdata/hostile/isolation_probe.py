# Run by many jails at once: each leaves channels open and checks it sees
# none of the others' (processes, /dev/shm, /tmp, SysV IPC, abstract unix
# sockets, keyrings, signals). Prints "isolated" when every check holds.
import ctypes, errno, fcntl, os, random, socket, time
problems = []
libc = ctypes.CDLL(None, use_errno=True)
name = f"gojail-conc-{os.getpid()}-{random.random()}"
for d in ("/dev/shm", "/tmp"):
    if os.listdir(d):
        problems.append(f"{d} not empty: {os.listdir(d)}")
for d in ("/dev/shm", "/tmp"):
    open(f"{d}/{name}", "w").write("x")
lock = open("/tmp/gojail-lock", "w")
try:
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    problems.append("the lock is held by someone else")
if libc.shmget(0x6A11, 4096, 0o1666 | 0o2000) < 0:  # IPC_CREAT|IPC_EXCL
    problems.append(f"SysV key taken: {errno.errorcode[ctypes.get_errno()]}")
s = socket.socket(socket.AF_UNIX)
try:
    s.bind("\0gojail-concurrent"); s.listen()
except OSError as e:
    problems.append(f"abstract socket taken: {e}")
if libc.syscall(248, b"user", b"gojail", b"x", 1, -3) >= 0:  # add_key into the session keyring
    problems.append("a key was added")
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
if pids != [1, os.getpid()]:
    problems.append(f"processes seen: {pids}")
for pid in range(3, 64):
    try:
        os.kill(pid, 0)
        problems.append(f"pid {pid} can be signalled")
    except ProcessLookupError:
        pass
time.sleep(random.uniform(0.05, 0.3))  # hold everything while others run
print("isolated" if not problems else "\n".join(problems))
