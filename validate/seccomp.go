package validate

import (
	"fmt"

	"github.com/gojail/gojail/policy"
)

var seccompActions = map[string]bool{policy.ActAllow: true, policy.ActErrno: true, policy.ActKill: true, policy.ActLog: true, policy.ActTrap: true}

var seccompOps = map[string]bool{"==": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true, "&=": true}

// checkSeccomp checks the [seccomp] section's form; the system-call names
// are checked against the kernel's table when the filter is compiled.
func checkSeccomp(p *policy.Policy) []error {
	s := &p.Seccomp
	var errs []error
	if s.Profile != "default" && s.Profile != "none" {
		errs = append(errs, fmt.Errorf("seccomp.profile %q: want \"default\" or \"none\"", s.Profile))
	}
	if !seccompActions[s.DefaultAction] {
		errs = append(errs, fmt.Errorf("seccomp.default_action %q: want allow, errno, kill, log or trap", s.DefaultAction))
	} else if s.DefaultAction == policy.ActErrno {
		if _, err := policy.ParseErrno(s.DefaultErrno); err != nil {
			errs = append(errs, fmt.Errorf("seccomp.default_errno: %w", err))
		}
	}
	for i, r := range s.Rules {
		where := fmt.Sprintf("seccomp rule %d", i+1)
		if len(r.Syscalls) == 0 {
			errs = append(errs, fmt.Errorf("%s names no system call", where))
		}
		if !seccompActions[r.Action] {
			errs = append(errs, fmt.Errorf("%s (%v): action %q: want allow, errno, kill, log or trap", where, r.Syscalls, r.Action))
		}
		if r.Action == policy.ActErrno {
			if _, err := policy.ParseErrno(r.Errno); err != nil {
				errs = append(errs, fmt.Errorf("%s (%v): %w", where, r.Syscalls, err))
			}
		} else if r.Errno != "" {
			errs = append(errs, fmt.Errorf("%s (%v): errno is only for the errno action", where, r.Syscalls))
		}
		if r.Action == s.DefaultAction && r.Action != policy.ActErrno {
			errs = append(errs, fmt.Errorf("%s (%v): action %s is the default action already", where, r.Syscalls, r.Action))
		}
		seen := map[uint]bool{}
		for _, a := range r.Args {
			switch {
			case a.Index > 5:
				errs = append(errs, fmt.Errorf("%s (%v): argument index %d: system calls have arguments 0 to 5", where, r.Syscalls, a.Index))
			case !seccompOps[a.Op]:
				errs = append(errs, fmt.Errorf("%s (%v): comparison %q: want ==, !=, <, <=, >, >= or &= (masked equality)", where, r.Syscalls, a.Op))
			case a.Op == "&=" && a.Mask == 0:
				errs = append(errs, fmt.Errorf("%s (%v): the &= comparison needs a mask", where, r.Syscalls))
			case a.Op != "&=" && a.Mask != 0:
				errs = append(errs, fmt.Errorf("%s (%v): mask is only for the &= comparison", where, r.Syscalls))
			case seen[a.Index]:
				errs = append(errs, fmt.Errorf("%s (%v): argument %d is compared twice: one comparison per argument per rule (write two rules)", where, r.Syscalls, a.Index))
			}
			seen[a.Index] = true
		}
	}
	return errs
}
