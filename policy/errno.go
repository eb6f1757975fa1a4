package policy

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// ParseErrno reads the error of an errno action: a name ("EPERM"), a
// number ("1"), or nothing, which is EPERM.
func ParseErrno(s string) (int, error) {
	if s == "" {
		return int(unix.EPERM), nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > 4095 {
			return 0, fmt.Errorf("errno %d is out of range 1-4095", n)
		}
		return n, nil
	}
	for n := 1; n < 200; n++ {
		if name := unix.ErrnoName(unix.Errno(n)); name != "" && name == s {
			return n, nil
		}
	}
	return 0, fmt.Errorf("unknown errno %q: give a name such as EPERM or a number", s)
}
