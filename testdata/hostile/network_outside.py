# TCP to the outside, DNS, UDP: no interface is up.
import socket
for what, f in [
    ("tcp 1.1.1.1:53", lambda: socket.create_connection(("1.1.1.1", 53), timeout=1)),
    ("dns", lambda: socket.getaddrinfo("debian.org", 443)),
    ("udp 8.8.8.8:53", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("8.8.8.8", 53))),
]:
    try:
        f()
        print(what, "reached")
    except OSError as e:
        print(what, type(e).__name__)
