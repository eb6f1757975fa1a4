# Spin on the CPU, ignoring every signal that can be ignored.
import signal
for s in (signal.SIGTERM, signal.SIGXCPU, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
while True:
    pass
