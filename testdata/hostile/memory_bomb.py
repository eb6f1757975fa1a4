# Allocate and touch memory without end.
a = []
while True:
    a.append(bytearray(1 << 20))
