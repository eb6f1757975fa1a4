# Start threads without end. The process limit (threads count) stops it.
import threading, time
n = 0
try:
    while True:
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        n += 1
except RuntimeError:
    print("thread limit reached")
