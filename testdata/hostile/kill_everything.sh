# kill(-1, SIGKILL): every process this one can signal. Only the jail's, none of the host's.
sleep 30 &
kill -9 -1
echo unreachable
