# Queue real-time signals to itself until refused: queued signals count
# against the host user's quota too, so the jail's own limit must stop it.
import ctypes, os, signal

class sigval(ctypes.Union):
    _fields_ = [("sival_int", ctypes.c_int), ("sival_ptr", ctypes.c_void_p)]

libc = ctypes.CDLL(None, use_errno=True)
libc.sigqueue.argtypes = [ctypes.c_int, ctypes.c_int, sigval]
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGRTMIN])
n = 0
while n < 200000 and libc.sigqueue(os.getpid(), int(signal.SIGRTMIN), sigval(0)) == 0:
    n += 1
print("queued", n)
