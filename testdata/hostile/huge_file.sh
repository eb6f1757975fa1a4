# One file larger than the file size limit: SIGXFSZ ends the writer.
exec head -c 100000000 /dev/zero > /work/huge
