# An example job: the kind of snippet an agent writes to answer a question.
import os, socket, sys

primes = [n for n in range(2, 100) if all(n % d for d in range(2, int(n ** 0.5) + 1))]
print(f"{len(primes)} primes below 100, the largest {primes[-1]}")
print(f"inside the jail: pid {os.getpid()}, uid {os.getuid()}, host {socket.gethostname()}, cwd {os.getcwd()}")
try:
    socket.create_connection(("1.1.1.1", 53), timeout=1)
except OSError as e:
    print(f"network: {e.strerror}")
print(f"/root visible: {os.path.exists('/root')}")
