package jail

import (
	"encoding/json"
	"strconv"
	"strings"
	"syscall"
)

// Status is the verdict of one run (see CONTRACT.md).
type Status string

const (
	StatusOK             Status = "ok"
	StatusRuntimeError   Status = "runtime_error"
	StatusSignaled       Status = "signaled"
	StatusTimeLimit      Status = "time_limit"
	StatusMemoryLimit    Status = "memory_limit"
	StatusOutputLimit    Status = "output_limit"
	StatusSyscallBlocked Status = "syscall_blocked"
	StatusInvalidInput   Status = "invalid_input"
	StatusInternalError  Status = "internal_error"
)

// Result is what happened in one run; its JSON form is the --json output.
type Result struct {
	Status          Status            `json:"status"`
	ExitCode        int               `json:"exit_code"`
	Signal          string            `json:"signal"`
	Stdout          string            `json:"stdout"` // kept of it: at most the limit, less a character the limit cut in two
	Stderr          string            `json:"stderr"`
	StdoutTruncated bool              `json:"stdout_truncated"`
	StderrTruncated bool              `json:"stderr_truncated"`
	StdoutBytes     int64             `json:"stdout_bytes"` // written by the program, kept or not
	StderrBytes     int64             `json:"stderr_bytes"`
	WallMs          float64           `json:"wall_ms"`
	CPUMs           float64           `json:"cpu_ms"`
	MemoryPeakBytes int64             `json:"memory_peak_bytes"`
	Enforced        map[string]string `json:"enforced"`
	Error           string            `json:"error"`
	// SeccompLog lists, with --seccomp-log, every system call the policy
	// refused (or logged), with what it did and which rule said so.
	SeccompLog []SeccompEvent `json:"seccomp_log,omitempty"`
	// LatencyMs is, in gojail batch, the time from reading the request to
	// the result: what a caller waits, the jail's preparation excluded
	// when a prepared jail was ready.
	LatencyMs float64 `json:"latency_ms,omitempty"`
	// ID is, in gojail batch, the request's "id" as it came (a JSON string
	// or number), so that a caller can match results to requests.
	ID json.RawMessage `json:"id,omitempty"`
}

// SeccompEvent is a system call the seccomp policy refused, in log mode.
type SeccompEvent struct {
	Syscall string `json:"syscall"`
	Action  string `json:"action"` // "errno EPERM", "kill", "log", "trap"
	Rule    string `json:"rule"`   // "seccomp rule 2", "rule 5 of the default profile", "the default action"
	Count   int    `json:"count"`
}

// Failed builds the result of a run that did not happen.
func Failed(status Status, err error) *Result {
	return &Result{Status: status, ExitCode: -1, Enforced: map[string]string{}, Error: err.Error()}
}

// ProcessExitCode is gojail's own exit code for this result: the program's
// code, 128+N for a signal N, 124 for time_limit (as timeout(1)), 125 when
// gojail failed or refused. A limit's verdict never exits 0: a program
// past its output limit, or after a call a kill rule stops, that ended by
// itself with 0 before the kill reached it exits 137, as the kill would
// have made it.
func (r *Result) ProcessExitCode() int {
	switch r.Status {
	case StatusInvalidInput, StatusInternalError:
		return 125
	case StatusTimeLimit:
		return 124
	}
	if r.Signal != "" {
		if s := signalNumber(r.Signal); s > 0 {
			return 128 + int(s)
		}
	}
	if r.ExitCode < 0 {
		return 125
	}
	if r.ExitCode == 0 && r.Status != StatusOK {
		return 128 + int(syscall.SIGKILL)
	}
	return r.ExitCode
}

// signalNames maps signal numbers to their names (SIGKILL).
var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGILL: "SIGILL",
	syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
	syscall.SIGKILL: "SIGKILL", syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM", syscall.SIGSTKFLT: "SIGSTKFLT",
	syscall.SIGCHLD: "SIGCHLD", syscall.SIGCONT: "SIGCONT", syscall.SIGSTOP: "SIGSTOP", syscall.SIGTSTP: "SIGTSTP",
	syscall.SIGTTIN: "SIGTTIN", syscall.SIGTTOU: "SIGTTOU", syscall.SIGURG: "SIGURG", syscall.SIGXCPU: "SIGXCPU",
	syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGVTALRM: "SIGVTALRM", syscall.SIGPROF: "SIGPROF", syscall.SIGWINCH: "SIGWINCH",
	syscall.SIGIO: "SIGIO", syscall.SIGPWR: "SIGPWR", syscall.SIGSYS: "SIGSYS",
}

func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return "SIG" + strconv.Itoa(int(s))
}

func signalNumber(name string) syscall.Signal {
	for s, n := range signalNames {
		if n == name {
			return s
		}
	}
	// The real-time signals, which signalName gives as their numbers.
	if n, err := strconv.Atoi(strings.TrimPrefix(name, "SIG")); err == nil && strings.HasPrefix(name, "SIG") && n >= 32 && n <= 64 {
		return syscall.Signal(n)
	}
	return 0
}
