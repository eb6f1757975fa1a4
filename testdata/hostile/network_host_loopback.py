# TCP to the host's 127.0.0.1 (the test listens on PORT): the jail's loopback is its own.
import os, socket
try:
    socket.create_connection(("127.0.0.1", int(os.environ["PORT"])), timeout=1)
    print("reached the host")
except OSError as e:
    print(type(e).__name__)
