package jail

import (
	"strings"
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

// The same with the program's own exit 0: the verdict is the limit's, and
// gojail's exit code is not 0 (a caller that reads only the exit code took
// an output_limit for a pass), but the kill's 137.
func TestVerdictKilledBeforeOwnExitZero(t *testing.T) {
	p, err := policy.Preset("exec")
	if err != nil {
		t.Fatal(err)
	}
	exited := []report{{Kind: reportExit, Status: 0}} // exit 0
	for _, tc := range []struct {
		killed string
		status Status
		exit   int
	}{
		{"", StatusOK, 0},
		{killSyscall, StatusSyscallBlocked, 137},
		{killOutput, StatusOutputLimit, 137},
	} {
		s := &supervisor{p: &p, blocked: "getcwd: the seccomp policy kills it"}
		r := &Result{ExitCode: -1}
		s.verdict(r, syscall.WaitStatus(0), exited, tc.killed, limits.Usage{})
		if r.Status != tc.status || r.ExitCode != 0 || r.ProcessExitCode() != tc.exit {
			t.Errorf("killed %q: %s, exit_code %d, gojail's exit %d; want %s, exit_code 0, gojail's exit %d", tc.killed, r.Status, r.ExitCode, r.ProcessExitCode(), tc.status, tc.exit)
		}
	}
}

// A jail that could not be waited for (the poll set's descriptor, say, for
// a caller at its descriptor limit) is an internal error that names why,
// not a cancelled run.
func TestVerdictPollFailed(t *testing.T) {
	p, err := policy.Preset("exec")
	if err != nil {
		t.Fatal(err)
	}
	s := &supervisor{p: &p, pollErr: syscall.EMFILE}
	r := &Result{ExitCode: -1}
	s.verdict(r, syscall.WaitStatus(0), nil, killPoll, limits.Usage{})
	if want := "waiting for the jail failed: too many open files"; r.Status != StatusInternalError || r.Error != want {
		t.Errorf("%s %q, want %s %q", r.Status, r.Error, StatusInternalError, want)
	}
}

// The runtimes' messages for a refused allocation, each of a failing
// program's last words; bash's were read as a runtime_error.
func TestAllocFailure(t *testing.T) {
	for _, tc := range []struct {
		stderr string
		want   bool
	}{
		{"Traceback (most recent call last):\n  File \"/work/main.py\", line 1\nMemoryError\n", true},
		{"/work/main.sh: xmalloc: cannot allocate 16 bytes\n", true},
		{"/work/main.sh: line 1: xrealloc: cannot allocate 18446744071562067968 bytes\n", true},
		{"FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n", true},
		{"terminate called after throwing an instance of 'std::bad_alloc'\n", true},
		{"ls: cannot access 'x': No such file or directory\n", false},
		{"", false},
	} {
		if got := allocFailure(tc.stderr, ""); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.stderr, got, tc.want)
		}
	}
}

// A stream past its limit keeps its last tailSize bytes apart, where the
// verdict reads a program's last words: a MemoryError after a truncated
// stderr was a runtime_error.
func TestStreamTail(t *testing.T) {
	s := stream{limit: 1024}
	var all []byte
	for i := 0; i < 50; i++ {
		b := []byte(strings.Repeat(string(rune('a'+i%26)), 97+i*13))
		all = append(all, b...)
		s.add(b)
	}
	all = append(all, "MemoryError\n"...)
	s.add([]byte("MemoryError\n"))
	if string(s.buf) != string(all[:1024]) || string(s.tail) != string(all[len(all)-tailSize:]) {
		t.Fatalf("kept %d bytes, tail %d bytes: not the stream's first 1024 and last %d", len(s.buf), len(s.tail), tailSize)
	}
	if allocFailure(s.kept(), "") || !allocFailure(s.kept(), string(s.tail)) {
		t.Fatal("the MemoryError past the kept bytes is found only in the tail")
	}
	small := stream{limit: 1024}
	small.add([]byte("short"))
	if small.tail != nil {
		t.Fatalf("a stream under its limit keeps a tail: %q", small.tail)
	}
}
