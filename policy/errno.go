package policy

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// ParseErrno reads the error of an errno action: a name ("EPERM"), a
// number ("1"), or nothing, which is EPERM.
func ParseErrno(e Errno) (int, error) {
	s := string(e)
	if s == "" {
		return int(unix.EPERM), nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > 4095 {
			return 0, fmt.Errorf("errno %d is out of range 1-4095", n)
		}
		return n, nil
	}
	// The second names Linux gives a number, which unix.ErrnoName does
	// not (errno(3)).
	switch s {
	case "EOPNOTSUPP":
		return int(unix.EOPNOTSUPP), nil
	case "EWOULDBLOCK":
		return int(unix.EWOULDBLOCK), nil
	case "EDEADLOCK":
		return int(unix.EDEADLOCK), nil
	}
	for n := 1; n < 200; n++ {
		if name := unix.ErrnoName(unix.Errno(n)); name != "" && name == s {
			return n, nil
		}
	}
	return 0, fmt.Errorf("unknown errno %q: give a name such as EPERM or a number", s)
}

// Errno is an errno action's error as a policy gives it: a name ("EACCES"),
// or a number, in TOML as a string ("13") or an integer (13).
type Errno string

// UnmarshalTOML takes a string, or an integer as its decimal string.
func (e *Errno) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		*e = Errno(x)
	case int64:
		*e = Errno(strconv.FormatInt(x, 10))
	default:
		return fmt.Errorf("an errno is a name such as \"EACCES\" or a number, not %T", v)
	}
	return nil
}
