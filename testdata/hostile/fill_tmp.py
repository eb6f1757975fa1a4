# Fill /tmp with files under the file size limit until the tmpfs is full:
# its size cap says no, and the host's disk is untouched.
import errno
n = 0
try:
    while True:
        with open(f"/tmp/fill{n}", "wb") as f:
            f.write(b"x" * (8 << 20))
        n += 1
except OSError as e:
    print(errno.errorcode[e.errno], n)
