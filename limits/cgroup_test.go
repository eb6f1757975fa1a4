package limits

import (
	"fmt"
	"os"
	"testing"
)

// A run's cgroup is a leftover only when its supervisor, of this pid
// namespace, is gone: a run of another pid namespace sharing the hierarchy
// is never judged (nor its processes killed) from here.
func TestStale(t *testing.T) {
	ns := pidNamespace()
	if ns == "0" {
		t.Skip("no /proc/self/ns/pid: cannot name this pid namespace")
	}
	const gone = 4194305 // above the kernel's largest pid
	for _, tc := range []struct {
		name string
		want bool
	}{
		{fmt.Sprintf("%d-%s-1", gone, ns), true},
		{fmt.Sprintf("%d-%s-1", os.Getpid(), ns), false},
		{fmt.Sprintf("%d-%s-1", os.Getppid(), ns), false},
		{fmt.Sprintf("%d-%s1-1", gone, ns), false}, // another pid namespace
		{fmt.Sprintf("%d-1", gone), true},          // the older two-part name
		{"notarun", false},
		{"x-1", false},
	} {
		if got := stale(tc.name); got != tc.want {
			t.Errorf("stale(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
	if name := runName(); !stale(fmt.Sprintf("%d%s", gone, name[len(fmt.Sprint(os.Getpid())):])) {
		t.Errorf("runName %q: a run of a gone supervisor with this format is not found stale", name)
	}
}
