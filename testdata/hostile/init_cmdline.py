# The jail's init is a copy of the supervisor: its command line must not
# show the supervisor's arguments (a library caller's, too).
try:
    print(repr(open("/proc/1/cmdline", "rb").read().strip(b"\0")))
except OSError as e:
    print(type(e).__name__)
