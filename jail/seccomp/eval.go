package seccomp

import "github.com/gojail/gojail/policy"

// Decide says what spec does with a system call of the native
// architecture: the action, its errno, and the rule (-1: the default
// action). It reads the rules as the compiled filter does; when several
// match, the most restrictive action wins (kill, trap, errno, log, allow).
// The supervisor uses it in log mode (--seccomp-log), where every refusal
// comes to it to be recorded and then answered as the policy would.
func (s Spec) Decide(nr int, args [6]uint64) (action string, errno int, rule int) {
	return s.decide(Name(nr), args)
}

func (s Spec) decide(name string, args [6]uint64) (action string, errno int, rule int) {
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
				errno, _ = policy.ParseErrno(r.Errno)
			}
		}
	}
	return action, errno, rule
}

// Call is a system call the jail makes itself with the filter in force,
// with the arguments it knows ahead: Known has bit i set when Args[i] is.
type Call struct {
	Name  string
	Args  [6]uint64
	Known uint8
}

// AllowsAll reports whether the filter of spec allows every call whatever
// its unknown arguments: a rule naming a call with a condition on an
// argument not known ahead makes the answer no, as does any action but
// allow. execve is allowed by Compile's own rule when the policy's default
// refuses and no rule names it.
func (s Spec) AllowsAll(calls []Call) bool {
	for _, c := range calls {
		if c.Name == "execve" && s.DefaultAction != policy.ActAllow && !names(s.Rules, "execve") {
			continue
		}
		for _, r := range s.Rules {
			if !names([]policy.SeccompRule{r}, c.Name) {
				continue
			}
			for _, a := range r.Args {
				if a.Index > 5 || c.Known&(1<<a.Index) == 0 {
					return false
				}
			}
		}
		if action, _, _ := s.decide(c.Name, c.Args); action != policy.ActAllow {
			return false
		}
	}
	return true
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
