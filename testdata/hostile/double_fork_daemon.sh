# Leave a daemon behind (double fork, new session): it dies with the jail.
( setsid sleep 1000 "$MARKER" & )
echo parent exits
