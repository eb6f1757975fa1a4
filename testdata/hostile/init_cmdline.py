# The jail's init runs in the supervisor's memory (or a copy of it): its
# command line, the supervisor's, must not be readable (a library caller's,
# too). The jail's /proc does not show the init at all.
try:
    print(repr(open("/proc/1/cmdline", "rb").read().strip(b"\0")))
except OSError as e:
    print(type(e).__name__)
