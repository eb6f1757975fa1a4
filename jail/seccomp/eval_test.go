package seccomp

import (
	"testing"

	"github.com/gojail/gojail/policy"
)

// AllowsAll answers yes only when every call is allowed whatever its
// arguments that are not known ahead.
func TestAllowsAll(t *testing.T) {
	def, err := SpecOf(defaultsSeccomp())
	if err != nil {
		t.Fatal(err)
	}
	read := Call{Name: "read", Args: [6]uint64{7}, Known: 1}
	prlimit := Call{Name: "prlimit64", Args: [6]uint64{0, 7}, Known: 1<<0 | 1<<1}
	cond := func(i uint, op string, v uint64) []policy.SeccompArg {
		return []policy.SeccompArg{{Index: i, Op: op, Value: v}}
	}
	for _, tc := range []struct {
		name  string
		spec  Spec
		calls []Call
		want  bool
	}{
		{"the default profile", def, []Call{read, prlimit, {Name: "write"}, {Name: "execve"}}, true},
		{"prlimit64 on another pid is refused", def, []Call{{Name: "prlimit64", Args: [6]uint64{5, 7}, Known: 3}}, false},
		{"a condition on an unknown argument", Spec{DefaultAction: policy.ActAllow, Rules: []policy.SeccompRule{
			{Syscalls: []string{"write"}, Action: policy.ActErrno, Errno: "EPERM", Args: cond(0, ">", 2)}}}, []Call{{Name: "write"}}, false},
		{"a condition on a known argument that holds", Spec{DefaultAction: policy.ActAllow, Rules: []policy.SeccompRule{
			{Syscalls: []string{"read"}, Action: policy.ActKill, Args: cond(0, "==", 9)}}}, []Call{read}, true},
		{"a condition on a known argument that fails", Spec{DefaultAction: policy.ActAllow, Rules: []policy.SeccompRule{
			{Syscalls: []string{"read"}, Action: policy.ActKill, Args: cond(0, "==", 7)}}}, []Call{read}, false},
		{"refused by default", Spec{DefaultAction: policy.ActErrno, DefaultErrno: 1}, []Call{read}, false},
		{"execve under a refusing default", Spec{DefaultAction: policy.ActKill}, []Call{{Name: "execve"}}, true},
		{"execve named by a rule", Spec{DefaultAction: policy.ActKill, Rules: []policy.SeccompRule{
			{Syscalls: []string{"execve"}, Action: policy.ActLog}}}, []Call{{Name: "execve"}}, false},
	} {
		if got := tc.spec.AllowsAll(tc.calls); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
