# Block reading stdin: it is empty, so the read returns at once.
import sys
print(repr(sys.stdin.read()))
