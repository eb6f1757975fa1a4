# Bytes that are not UTF-8, and NUL: the JSON result stays valid.
import sys
sys.stdout.buffer.write(bytes(range(256)))
