# Create empty files until the tmpfs runs out of inodes.
import errno, os
n = 0
try:
    while True:
        open(f"/tmp/f{n}", "w").close()
        n += 1
except OSError as e:
    print(errno.errorcode[e.errno], n < 5000)
