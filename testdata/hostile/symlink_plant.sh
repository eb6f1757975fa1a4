# Links planted where a host process might follow them: to host files, to /proc.
ln -s /etc/shadow /work/main.out
ln -s /proc/1/root /work/root
ln -s /root /tmp/root
if [ -e /work/main.out ] || [ -e /work/root ]; then echo "links resolve"; else echo "links dangle"; fi
