package seccomp

import "github.com/gojail/gojail/policy"

// Decide says what spec does with a system call of the native
// architecture: the action, its errno, and the rule (-1: the default
// action). It reads the rules as the compiled filter does; when several
// match, the most restrictive action wins (kill, trap, errno, log, allow).
// The supervisor uses it in log mode (--seccomp-log), where every refusal
// comes to it to be recorded and then answered as the policy would.
func (s Spec) Decide(nr int, args [6]uint64) (action string, errno int, rule int) {
	name := Name(nr)
	action, errno, rule = s.DefaultAction, s.DefaultErrno, -1
	best := -1
	for i, r := range s.Rules {
		if !names([]policy.SeccompRule{r}, name) || !matches(r.Args, args) {
			continue
		}
		if p := precedence[r.Action]; p > best {
			best = p
			action, rule, errno = r.Action, i, 0
			if r.Action == policy.ActErrno {
				errno, _ = ParseErrno(r.Errno)
			}
		}
	}
	return action, errno, rule
}

var precedence = map[string]int{policy.ActAllow: 0, policy.ActLog: 1, policy.ActErrno: 2, policy.ActTrap: 3, policy.ActKill: 4}

func matches(conds []policy.SeccompArg, args [6]uint64) bool {
	for _, c := range conds {
		if c.Index > 5 {
			return false
		}
		a := args[c.Index]
		var ok bool
		switch c.Op {
		case "==":
			ok = a == c.Value
		case "!=":
			ok = a != c.Value
		case "<":
			ok = a < c.Value
		case "<=":
			ok = a <= c.Value
		case ">":
			ok = a > c.Value
		case ">=":
			ok = a >= c.Value
		case "&=":
			ok = a&c.Mask == c.Value
		}
		if !ok {
			return false
		}
	}
	return true
}

// names reports whether a rule names the system call.
func names(rules []policy.SeccompRule, name string) bool {
	for _, r := range rules {
		for _, sc := range r.Syscalls {
			if sc == name {
				return true
			}
		}
	}
	return false
}
