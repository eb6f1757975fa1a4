package jail_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gojail/gojail/jail"
	"github.com/gojail/gojail/policy"
)

// Many runs in a row from one long-lived caller (the library's use): no
// growth in the caller's descriptors or memory, nor in the host's
// processes, mounts, cgroups or temp entries. GOJAIL_SOAK runs (make soak:
// 10,000; make test: 300).
func TestSoak(t *testing.T) {
	n := 300
	if v, err := strconv.Atoi(os.Getenv("GOJAIL_SOAK")); err == nil && v > 0 {
		n = v
	}
	p, before := baseline(t, 20) // the runtime's own first allocations
	for i := 0; i < n; i++ {
		runTrue(t, &p)
	}
	after := measure(t)
	t.Logf("%d runs: before %+v, after %+v", n, before, after)
	if after.fds != before.fds || after.procs > before.procs || after.mounts != before.mounts ||
		after.cgroups != before.cgroups || after.tmp != before.tmp {
		t.Fatalf("growth after %d runs: before %+v, after %+v", n, before, after)
	}
	if after.rssKB > before.rssKB+8*1024 {
		t.Fatalf("the caller's RSS grew from %d to %d kB over %d runs", before.rssKB, after.rssKB, n)
	}
}

// baseline makes warm runs of /bin/true under the exec preset, then
// measures the host and this process as they are to stay.
func baseline(t *testing.T, warm int) (policy.Policy, hostState) {
	t.Helper()
	p, err := policy.Preset("exec")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < warm; i++ {
		runTrue(t, &p)
	}
	measure(t) // its own first use of the os package makes the runtime's poller (2 fds)
	return p, measure(t)
}

// sameHost fails unless nothing was left since before: this process's
// descriptors and children, mounts, cgroups and temp entries (memory is
// TestSoak's to watch).
func sameHost(t *testing.T, before hostState) {
	t.Helper()
	after := measure(t)
	after.rssKB = before.rssKB
	if after != before {
		t.Fatalf("before %+v, after %+v", before, after)
	}
}

func runTrue(t *testing.T, p *policy.Policy) {
	t.Helper()
	if r := jail.Run(context.Background(), p, jail.Input{Program: "/bin/true"}); r.Status != jail.StatusOK {
		t.Fatalf("run: %s %s", r.Status, r.Error)
	}
}

type hostState struct {
	fds, procs, mounts, cgroups, tmp int
	rssKB                            int
}

func measure(t *testing.T) hostState {
	var s hostState
	fds, _ := os.ReadDir("/proc/self/fd")
	s.fds = len(fds)
	// Processes the jails could have left: every jail's init is a child of
	// this process, and takes the rest of its jail with it.
	for _, f := range must(filepath.Glob("/proc/self/task/*/children")) {
		b, _ := os.ReadFile(f)
		s.procs += len(strings.Fields(string(b)))
	}
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	s.mounts = strings.Count(string(mi), "\n")
	for _, pattern := range []string{"/sys/fs/cgroup/*/gojail/*", "/sys/fs/cgroup/*/*/gojail/*", "/sys/fs/cgroup/*/*/*/gojail/*"} {
		matches, _ := filepath.Glob(pattern)
		for _, m := range matches {
			// This process's runs: named after the supervisor, this process.
			if !strings.HasPrefix(filepath.Base(m), strconv.Itoa(os.Getpid())+"-") {
				continue
			}
			if st, err := os.Stat(m); err == nil && st.IsDir() {
				s.cgroups++
			}
		}
	}
	tmp, _ := os.ReadDir(os.TempDir())
	for _, e := range tmp {
		if strings.HasPrefix(e.Name(), "gojail") {
			s.tmp++
		}
	}
	st, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			s.rssKB, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return s
}

func must(m []string, _ error) []string { return m }
