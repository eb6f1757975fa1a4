# Host secrets: shadow, root's home, ssh keys, the supervisor's environment, init's root.
import os
for path in ["/etc/shadow", "/root/.ssh", "/home", "/proc/1/environ", "/proc/1/root/etc/shadow", "/proc/1/mem", "/proc/1/cwd/x"]:
    try:
        with open(path, "rb") as f:
            print(path, "read", len(f.read(16)))
    except OSError as e:
        print(path, type(e).__name__)
try:
    print("/proc/1/fd", len(os.listdir("/proc/1/fd")))
except OSError as e:
    print("/proc/1/fd", type(e).__name__)
print("env", sorted(k for k in os.environ if "SECRET" in k))
