# Writes to /usr, /etc, /, /dev, and a remount to read-write.
for f in /usr/bin/evil /etc/passwd /evil /dev/evil /usr/lib/evil.so; do
	( : > "$f" ) 2>/dev/null && echo "$f written" || echo "$f no"
done
chmod 777 /usr/bin/true 2>/dev/null && echo "chmod done" || echo "chmod no"
mount -o remount,rw /usr 2>/dev/null && echo "remounted" || echo "remount no"
mknod /tmp/sda b 8 0 2>/dev/null && echo "mknod done" || echo "mknod no"
