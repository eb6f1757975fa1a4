package jail

import (
	"strings"
	"testing"
)

// The entry's init is mapped with firstPlanRoom for its first plan, which
// it cannot size with into: the plan as copied fits, with the room the
// run's plan is given after it as large as StartEarly's.
func TestFirstPlanRoom(t *testing.T) {
	var e Early
	c := new(childPlan)
	keep := e.firstPlan(c, 3)
	c.keepFds = keep[:]
	var sizing childMem
	sizing.off = pageSize + childStack + pageSize + pid2Stack + fakeGSize + tlsSize // as mapRoom leaves it, or more
	start := sizing.off
	c.into(&sizing)
	used := sizing.off - start
	t.Logf("the first plan takes %d bytes of %d", used, firstPlanRoom)
	if used > firstPlanRoom/2 {
		t.Fatalf("the first plan takes %d bytes, firstPlanRoom is %d: raise it", used, firstPlanRoom)
	}
}

// WantsEarly's answers: only a run, and not one that asks for help or for
// the host's network before its program.
func TestWantsEarly(t *testing.T) {
	for _, tc := range []struct {
		args string
		want bool
	}{
		{"run -- /bin/true", true},
		{"run script.py", true},
		{"run", true},
		{"run --net loopback -- /bin/true", true},
		{"run -- /bin/prog --net host", true},
		{"run -- /bin/prog --help", true},
		{"batch", false},
		{"", false},
		{"--help run", false},
		{"run --help", false},
		{"run -h", false},
		{"run --net host -- /bin/true", false},
		{"run --net=host /bin/true", false},
		{"run -net host", false},
		{"run --net", true},
	} {
		args := strings.Fields(tc.args)
		if got := WantsEarly(len(args), func(i int) string { return args[i] }); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.args, got, tc.want)
		}
	}
}
