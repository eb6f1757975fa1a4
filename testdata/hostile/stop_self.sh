# Stop itself (SIGSTOP): the wall clock still ends it, and SIGKILL reaches it.
kill -STOP $$
