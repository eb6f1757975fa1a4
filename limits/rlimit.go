// Package limits turns a policy's limits into the mechanisms that enforce
// them: rlimits set by the jail's init, cgroups set by the supervisor, and
// the supervisor's own wall-clock watchdog.
package limits

import (
	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/policy"
)

// Rlimit is one resource limit for setrlimit(2).
type Rlimit struct {
	Name     string // for --debug and errors, e.g. "RLIMIT_CPU"
	Resource int
	Cur, Max uint64
}

// Rlimits returns the rlimits the jail's init sets before it starts the
// program. withCgroup says whether a cgroup caps memory and the process
// count; without one, RLIMIT_NPROC does (counted per user of the jail's
// user namespace, Linux 5.14) and RLIMIT_AS caps memory when the policy
// allows it.
func Rlimits(l *policy.Limits, withCgroup bool) []Rlimit {
	cpu := CPURlimitSeconds(l.CPUTime)
	if withCgroup {
		// The supervisor ends the tree when the cgroup's counter (exact, in
		// nanoseconds) reaches the limit; RLIMIT_CPU is only its backstop,
		// a second above. At the limit itself it would race the counter,
		// and the kernel checks it against a CPU time sampled at the tick:
		// programs were killed "over 1s" at 997 ms (once 941 ms) of the
		// counter's time.
		cpu++
	}
	rl := []Rlimit{
		// SIGXCPU at the soft limit, SIGKILL one second later: a program
		// that ignores SIGXCPU still ends (setrlimit(2)).
		{"RLIMIT_CPU", unix.RLIMIT_CPU, cpu, cpu + 1},
		{"RLIMIT_FSIZE", unix.RLIMIT_FSIZE, uint64(l.FileSize), uint64(l.FileSize)},
		{"RLIMIT_NOFILE", unix.RLIMIT_NOFILE, uint64(l.OpenFiles), uint64(l.OpenFiles)},
		{"RLIMIT_STACK", unix.RLIMIT_STACK, uint64(l.Stack), uint64(l.Stack)},
		{"RLIMIT_CORE", unix.RLIMIT_CORE, 0, 0}, // no core files
		{"RLIMIT_MEMLOCK", unix.RLIMIT_MEMLOCK, 64 << 10, 64 << 10},
		{"RLIMIT_MSGQUEUE", unix.RLIMIT_MSGQUEUE, 0, 0},
		// Queued signals are charged to the user namespace's owner too (the
		// host's root, when gojail runs as root): without a limit one jail
		// could take every user's quota (Linux 5.14 ucounts).
		{"RLIMIT_SIGPENDING", unix.RLIMIT_SIGPENDING, 256, 256},
	}
	if !withCgroup {
		// +1: the jail's init counts as one of the user's processes.
		n := uint64(l.Pids) + 1
		rl = append(rl, Rlimit{"RLIMIT_NPROC", unix.RLIMIT_NPROC, n, n})
		if l.RlimitAS {
			rl = append(rl, Rlimit{"RLIMIT_AS", unix.RLIMIT_AS, uint64(l.Memory), uint64(l.Memory)})
		}
	}
	return rl
}

// CPURlimitSeconds rounds a CPU limit up to RLIMIT_CPU's whole seconds.
func CPURlimitSeconds(d policy.Duration) uint64 {
	const sec = int64(1e9)
	n := (int64(d) + sec - 1) / sec
	if n < 1 {
		n = 1
	}
	return uint64(n)
}
