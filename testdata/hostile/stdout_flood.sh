# A gigabyte on stdout: the supervisor keeps its cap and drains the rest.
head -c 1073741824 /dev/zero
echo done >&2
