package jail

import (
	"fmt"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/gojail/gojail/limits"
	"github.com/gojail/gojail/policy"
)

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// decodeReports splits the report pipe's bytes into records.
func decodeReports(b []byte) []report {
	var reps []report
	size := int(unsafe.Sizeof(report{}))
	for ; len(b) >= size; b = b[size:] {
		reps = append(reps, *(*report)(unsafe.Pointer(&b[0])))
	}
	return reps
}

// verdict fills in the status, exit code and signal.
func (s *supervisor) verdict(r *Result, initStatus syscall.WaitStatus, reps []report, killed string, usage limits.Usage) {
	var exit *report
	for i := range reps {
		switch reps[i].Kind {
		case reportError:
			err := s.childError(reps[i])
			r.Status, r.Error = StatusInternalError, "jail setup failed: "+err.Error()
			switch {
			case inputFault(err) && err.Step == stepExec:
				r.Status, r.Error = StatusInvalidInput, fmt.Sprintf("cannot run %s inside the jail: %v", s.programPath(), err.Errno)
				if err.Errno == syscall.ENOEXEC {
					r.Error += " (a script needs a #! line naming its interpreter, or the preset of its language: --policy python, node, bash or sh)"
				}
			case inputFault(err):
				r.Status, r.Error = StatusInvalidInput, fmt.Sprintf("the submitted file does not fit the work directory (limits.work_size %s, limits.inodes %d): %v", s.p.Limits.WorkSize, s.p.Limits.Inodes, err.Errno)
			}
			return
		case reportExit:
			exit = &reps[i]
		}
	}
	l := &s.p.Limits
	if exit == nil {
		r.Signal = "SIGKILL"
		switch killed {
		case killWall:
			r.Status, r.Error = StatusTimeLimit, fmt.Sprintf("wall-clock limit of %s exceeded", l.WallTime)
		case killCPU:
			r.Status, r.Error = StatusTimeLimit, fmt.Sprintf("CPU-time limit of %s exceeded (the whole tree)", l.CPUTime)
		case killOutput:
			r.Status, r.Error = StatusOutputLimit, fmt.Sprintf("output limit of %s per stream exceeded", l.Output)
		case killContext:
			r.Status, r.Error = StatusInternalError, "the run was cancelled"
		case killPoll:
			r.Status, r.Error = StatusInternalError, fmt.Sprintf("waiting for the jail failed: %v", s.pollErr)
		case killSyscall:
			r.Status, r.Error = StatusSyscallBlocked, "blocked "+s.blocked
		case "":
			if usage.OOMKills > 0 {
				r.Status, r.Error = StatusMemoryLimit, fmt.Sprintf("memory limit of %s exceeded: the OOM killer ended the jail's init%s", l.Memory, s.capNote())
				break
			}
			r.Status, r.Error = StatusInternalError, fmt.Sprintf("the jail's init ended without a report (%s)", describeWait(initStatus))
			r.Signal = ""
		}
		return
	}
	ws := syscall.WaitStatus(exit.Status)
	switch killed {
	// The program ended by itself before the kill reached it, after a
	// call the filter kills (which never ran), or past the output limit
	// with output_action kill: its own exit code or signal, and that
	// verdict.
	case killSyscall:
		defer func() {
			r.Status, r.Error = StatusSyscallBlocked, "blocked "+s.blocked+" (the program ended by itself before it was killed)"
		}()
	case killOutput:
		defer func() {
			r.Status, r.Error = StatusOutputLimit, fmt.Sprintf("output limit of %s per stream exceeded (the program ended by itself before it was killed)", l.Output)
		}()
	}
	defer s.pidsNote(r, usage) // deferred: after the two below
	defer s.cpuVerdict(r)
	defer s.memoryVerdict(r, usage)
	switch {
	case ws.Exited():
		r.ExitCode = ws.ExitStatus()
		r.Status = StatusOK
		if r.ExitCode != 0 {
			r.Status = StatusRuntimeError
		}
	case ws.Signaled():
		sig := ws.Signal()
		r.Signal = signalName(sig)
		cpuLimitMs := float64(limits.CPURlimitSeconds(l.CPUTime) * 1000)
		switch {
		case sig == syscall.SIGXCPU && r.CPUMs < ms(l.CPUTime.Std())*9/10:
			// Not this limit's RLIMIT_CPU, whose SIGXCPU comes once a
			// process has used it (less a tick's sampling): one the
			// program set itself.
			r.Status, r.Error = StatusSignaled, fmt.Sprintf("killed by SIGXCPU after %.0f ms of CPU, under the CPU-time limit of %s: an RLIMIT_CPU the program set itself", r.CPUMs, l.CPUTime)
		case sig == syscall.SIGXCPU || (sig == syscall.SIGKILL && r.CPUMs >= cpuLimitMs):
			r.Status, r.Error = StatusTimeLimit, fmt.Sprintf("CPU-time limit of %s exceeded", l.CPUTime)
		case sig == syscall.SIGSYS:
			r.Status, r.Error = StatusSyscallBlocked, "killed by SIGSYS: a seccomp trap rule (or the program itself)"
		case sig == syscall.SIGXFSZ:
			r.Status, r.Error = StatusOutputLimit, fmt.Sprintf("file size limit of %s exceeded (or a lower RLIMIT_FSIZE the program set itself)", l.FileSize)
		default:
			r.Status, r.Error = StatusSignaled, "killed by "+r.Signal+signalWords(sig, l)
		}
	default:
		r.Status, r.Error = StatusInternalError, "unexpected wait status "+describeWait(ws)
	}
}

// pidsNote says so in a failed run's error when the process limit refused
// a fork or a thread, which the program only sees as EAGAIN ("can't start
// new thread"), and may report or not.
func (s *supervisor) pidsNote(r *Result, u limits.Usage) {
	if u.PidsHit == 0 || (r.Status != StatusRuntimeError && r.Status != StatusSignaled) {
		return
	}
	note := fmt.Sprintf("the process limit of %d (limits.pids) refused %d new process(es) or thread(s)", s.p.Limits.Pids, u.PidsHit)
	if r.Error != "" {
		note = r.Error + "; " + note
	}
	r.Error = note
}

// signalWords says what a signal that killed the program, no limit of
// gojail's, usually means.
func signalWords(sig syscall.Signal, l *policy.Limits) string {
	switch sig {
	case syscall.SIGSEGV:
		return fmt.Sprintf(": an invalid memory access (a stack overflow past limits.stack, %s, ends this way too)", l.Stack)
	case syscall.SIGBUS:
		return ": a bus error (a mapped file's page gone, say)"
	case syscall.SIGFPE:
		return ": an arithmetic error (an integer division by zero, say)"
	case syscall.SIGILL:
		return ": an illegal instruction"
	case syscall.SIGABRT:
		return ": abort() (a failed assertion, or an uncaught C++ exception)"
	case syscall.SIGKILL:
		return ", by no limit of gojail's (from inside the jail, or from the host)"
	}
	return ""
}

// cpuVerdict makes a failure of a tree that used more CPU time than the
// limit a time_limit, as memoryVerdict does for memory: without a cgroup
// RLIMIT_CPU stops each process only at its own next whole second, and a
// child it stopped with SIGXCPU left its parent to fail with an exit code
// (runtime_error); the supervisor's kill on a cgroup's reading past the
// limit may come just after the program's own end. A program that exited
// 0 is ok (CONTRACT.md), its CPU time in cpu_ms.
func (s *supervisor) cpuVerdict(r *Result) {
	if r.Status != StatusRuntimeError && r.Status != StatusSignaled {
		return
	}
	l := &s.p.Limits
	if r.CPUMs <= ms(l.CPUTime.Std()) {
		return
	}
	r.Status, r.Error = StatusTimeLimit, fmt.Sprintf("CPU-time limit of %s exceeded: %.1f ms of CPU (the whole tree)", l.CPUTime, r.CPUMs)
	if s.cg == nil {
		r.Error += "; without a cgroup each process is stopped only at its next whole second of CPU (RLIMIT_CPU)"
	}
}

// inputFault reports whether a setup failure is the submission's fault:
// the program missing or not executable inside the jail, arguments too
// long for execve, a file that does not fit the work directory.
func inputFault(err *ChildError) bool {
	switch err.Step {
	case stepExec:
		return err.Errno == syscall.ENOENT || err.Errno == syscall.EACCES || err.Errno == syscall.ENOEXEC || err.Errno == syscall.E2BIG
	case stepWriteFile, stepCommand:
		return err.Errno == syscall.ENOSPC || err.Errno == syscall.EFBIG || err.Errno == syscall.E2BIG || err.Errno == syscall.EDQUOT
	}
	return false
}

// memoryVerdict makes a failed run memory_limit when the memory limit
// ended it: the OOM killer acted in its cgroup, or the program failed after
// its memory reached the limit (an allocation the limit refused). Without a
// cgroup the only sign of an address-space rlimit refusing an allocation is
// the runtime's own message, so that is what is read.
func (s *supervisor) memoryVerdict(r *Result, u limits.Usage) {
	if r.Status != StatusRuntimeError && r.Status != StatusSignaled {
		return
	}
	limit := int64(s.p.Limits.Memory)
	switch {
	case u.OOMKills > 0:
		r.Error = fmt.Sprintf("memory limit of %s exceeded: the OOM killer ended %d process(es)%s", s.p.Limits.Memory, u.OOMKills, s.capNote())
	case s.cg != nil && u.MemoryHit > 0 && u.MemoryPeak >= limit-limit/10:
		r.Error = fmt.Sprintf("memory limit of %s reached: an allocation failed", s.p.Limits.Memory)
	case s.cg == nil && s.p.Limits.RlimitAS && allocFailure(r.Stderr, s.stderrTail):
		r.Error = fmt.Sprintf("memory limit of %s (address-space rlimit) reached: an allocation failed", s.p.Limits.Memory)
	default:
		return
	}
	r.Status = StatusMemoryLimit
}

// capNote says so when a cgroup enclosing the jail's allows less memory
// than the policy's limit (gojail run inside a smaller container, say): the
// OOM killer then acts below the limit the verdict names. It reads the
// cgroups only for such a verdict.
func (s *supervisor) capNote() string {
	if s.cg == nil {
		return ""
	}
	if c := s.cg.MemoryCap(); c > 0 && c < int64(s.p.Limits.Memory) {
		return fmt.Sprintf(" (a cgroup enclosing the jail's allows only %s)", policy.Size(c))
	}
	return ""
}

// allocFailure reports whether stderr ends with a runtime's message for a
// refused allocation (Python, glibc and bash, node).
func allocFailure(stderr, truncatedTail string) bool {
	tail := stderr[max(0, len(stderr)-tailSize):]
	if truncatedTail != "" { // the stream's real end, past what is kept
		tail = truncatedTail
	}
	for _, m := range []string{"MemoryError", "Cannot allocate memory", "cannot allocate memory", "out of memory", "Out of memory", "std::bad_alloc",
		"xmalloc: cannot allocate", "xrealloc: cannot allocate"} { // bash's own allocator
		if strings.Contains(tail, m) {
			return true
		}
	}
	return false
}

// childError turns a report into a ChildError naming what the step worked on.
func (s *supervisor) childError(rep report) *ChildError {
	e := &ChildError{Step: Step(rep.Step), Index: int(rep.Index), Errno: syscall.Errno(rep.Errno)}
	switch e.Step {
	case stepBind, stepBindChanged, stepSetattr, stepMkdir, stepSymlink, stepWriteFile, stepMountPoint, stepMoveMount, stepFsopen, stepFsconfig, stepFsmount:
		if e.Index < len(s.plan.ops) {
			e.Detail = s.plan.ops[e.Index].desc
		}
	case stepRlimit:
		if e.Index < len(s.rlimitNames) {
			e.Detail = s.rlimitNames[e.Index]
		}
	case stepExec:
		e.Detail = s.programPath()
	case stepCodeFile:
		e.Detail = strings.TrimSuffix(s.p.Run.Workdir, "/") + "/" + s.p.Run.File
	case stepSendListener:
		if e.Errno == syscall.ETOOMANYREFS { // only when the filter refuses prlimit64 (filterOrder)
			e.Detail = "(the jail's host user has more descriptors in flight in unix sockets than limits.open_files, held by another of its processes; this policy's filter refuses prlimit64, so pid 2's limits are set before the listener is sent)"
		}
	case stepJoinCgroup: // pid 2 counts the message's descriptors, stdin first
		if i := e.Index - s.joinFirst; i >= 0 && i < len(s.joinPaths) {
			e.Detail = s.joinPaths[i]
		}
	}
	return e
}

func describeWait(ws syscall.WaitStatus) string {
	switch {
	case ws.Exited():
		return fmt.Sprintf("exit code %d", ws.ExitStatus())
	case ws.Signaled():
		return "killed by " + signalName(ws.Signal())
	}
	return fmt.Sprintf("status %#x", uint32(ws))
}

// markLine logs one of the child's --debug marks: its step, and its time
// since the clone (none when the filter refused the clock).
func (s *supervisor) markLine(rep report) {
	if rep.UtimeUs == 0 {
		s.log("child: %s (no time: the seccomp filter refuses clock_gettime)", markWords[Step(rep.Step)])
		return
	}
	words := markWords[Step(rep.Step)]
	if Step(rep.Step) == stepUnshare && s.plan != nil { // which, the policy's
		words = "namespaces made (" + nsNames(uint64(s.plan.unshareFlags)) + ")"
	}
	s.log("child: %s, %.3f ms after the clone", words, float64(time.Duration(rep.UtimeUs)-s.monoFork)/1e6)
}
