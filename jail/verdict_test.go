package jail

import (
	"syscall"
	"testing"

	"github.com/gojail/gojail/limits"
	"github.com/gojail/gojail/policy"
)

// A call a kill rule stops is the verdict even when the program ended by
// itself before the kill reached it (another of its threads exited, say):
// its own exit code stays, and so does the call's name.
func TestVerdictKilledCallBeforeOwnExit(t *testing.T) {
	p, err := policy.Preset("exec")
	if err != nil {
		t.Fatal(err)
	}
	exited := []report{{Kind: reportExit, Status: 3 << 8}} // exit 3
	for _, tc := range []struct {
		killed string
		status Status
		error  string
	}{
		{"", StatusRuntimeError, ""},
		{killSyscall, StatusSyscallBlocked, "blocked getcwd: the seccomp policy kills it (the program ended by itself before it was killed)"},
		{killOutput, StatusOutputLimit, "output limit of 1MiB per stream exceeded (the program ended by itself before it was killed)"},
	} {
		s := &supervisor{p: &p, blocked: "getcwd: the seccomp policy kills it"}
		r := &Result{ExitCode: -1}
		s.verdict(r, syscall.WaitStatus(0), exited, tc.killed, limits.Usage{})
		if r.Status != tc.status || r.ExitCode != 3 || r.Signal != "" || r.Error != tc.error {
			t.Errorf("killed %q: %s, exit %d, signal %q, error %q; want %s, exit 3, no signal, error %q", tc.killed, r.Status, r.ExitCode, r.Signal, r.Error, tc.status, tc.error)
		}
		if r.ProcessExitCode() != 3 {
			t.Errorf("killed %q: gojail's exit code %d, want the program's 3", tc.killed, r.ProcessExitCode())
		}
	}
}
