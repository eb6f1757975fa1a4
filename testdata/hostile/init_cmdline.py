# The jail's init is a copy of the supervisor: its command line, the
# supervisor's, must not be readable (a library caller's, too). The jail's
# /proc does not show the init at all.
try:
    print(repr(open("/proc/1/cmdline", "rb").read().strip(b"\0")))
except OSError as e:
    print(type(e).__name__)
