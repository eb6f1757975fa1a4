package jail

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/jail/seccomp"
	"github.com/gojail/gojail/limits"
	"github.com/gojail/gojail/policy"
)

// cgroup creates the run's cgroup and chooses the rlimits. Without a
// usable cgroup it falls back to rlimits and says in "enforced" what is
// weaker, and in --debug why.
func (s *supervisor) cgroup() error {
	l := &s.p.Limits
	spec := s.cgSpec()
	var why string
	var tasks bool
	if spec.Name, spec.Made, spec.Wrote, tasks, why = s.early.cgroupMade(spec); why != "" {
		s.log("cgroup: the directories the init was asked to make are not taken (%s): made here", why)
	}
	cg, err := limits.New(spec)
	var no *limits.ErrNoCgroup
	switch {
	case err == nil:
		s.cg = cg
		// The init's writes and tasks files are the cgroup's when its
		// directories are those made early, all of them (limits.New takes
		// the writes then); pid 2 then joins through its descriptors.
		took := len(spec.Made) > 0 && slices.Equal(cg.TaskFiles(), taskFiles(spec.Made))
		s.joinTasks = tasks && took
		if n := limits.Takes(cg, spec.Made); n > 0 {
			wrote := ""
			if took && spec.Wrote != nil {
				wrote = ", and its limits written there"
			}
			s.log("cgroup: %d of its directories made by the init before its release%s", n, wrote)
		} else if len(spec.Made) > 0 {
			s.log("cgroup: the directories the init made are not taken (this process is in another cgroup since): made here")
		}
		m := cg.Mechanism()
		s.log("%s: memory %s (swap off), %d processes%s; the program's tree, not the jail's init", m, l.Memory, l.Pids, cpuQuota(l.CPUs))
		s.enforced["memory"], s.enforced["pids"], s.enforced["cpu_time"] = m, m, m+"+rlimit"
		if l.CPUs > 0 {
			s.enforced["cpus"] = m
		}
	case errors.As(err, &no):
		s.log("no cgroup, falling back to rlimits: %s", no.Reason)
		s.enforced["pids"] = "rlimit-nproc"
		s.enforced["cpu_time"] = "rlimit-per-process (no cgroup: each process gets SIGXCPU at its next whole second of CPU, and SIGKILL a second later if it ignores or handles it; a tree past the limit that fails is a time_limit)"
		s.enforced["memory"] = "rlimit-as (no cgroup: caps each process's address space, not the tree's memory)"
		if !l.RlimitAS {
			s.enforced["memory"] = "none (no cgroup, and this policy turns the address-space rlimit off)"
		}
		if l.CPUs > 0 {
			s.enforced["cpus"] = "none (no cgroup)"
		}
	default:
		return err
	}
	rls := limits.Rlimits(l, s.cg != nil)
	for _, rl := range rls {
		s.log("rlimit: %s = %d (hard %d)", rl.Name, rl.Cur, rl.Max)
		if rl.Resource == unix.RLIMIT_NOFILE {
			// Set by the program's process itself, after it has put the
			// listener's socket above it (child_linux.go).
			s.plan.nofile = rlimit{uintptr(rl.Resource), rl.Cur, rl.Max}
			continue
		}
		s.plan.rlimits = append(s.plan.rlimits, rlimit{uintptr(rl.Resource), rl.Cur, rl.Max})
		s.rlimitNames = append(s.rlimitNames, rl.Name)
	}
	return nil
}

// taskFiles are the tasks files of the v1 directories dirs.
func taskFiles(dirs []string) []string {
	var paths []string
	for _, dir := range dirs {
		paths = append(paths, filepath.Join(dir, "tasks"))
	}
	return paths
}

// cgSpec is what the run's cgroup enforces.
func (s *supervisor) cgSpec() limits.Spec {
	l := &s.p.Limits
	return limits.Spec{Memory: int64(l.Memory), Pids: l.Pids, CPUs: l.CPUs, TCP: s.p.Net.Mode != policy.NetNone}
}

// filter loads the policy's compiled seccomp filter, and readies the
// message in which the jail sends the filter's listener back (on the
// pipes' socket).
func (s *supervisor) filter() error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("getrlimit: %w", err)
	}
	// The listener's socket goes to the program's RLIMIT_NOFILE, the first
	// number the program can never have (its hard limit is the same), or
	// above the descriptors of the jail's process when one is higher (a
	// caller with many files open) and those it receives (fewer than 64).
	// Not higher: the process's descriptor table grows to hold it, and each
	// execve and exit goes through the table (at 19,999, 32,768 entries:
	// 0.14 ms a run). pid 2 checks that the number is free.
	c := s.plan
	hi := max(c.syncR, c.ctlR, c.ctlW, c.reportW, c.stdio[0], c.stdio[1], c.stdio[2], c.notifySock, c.goR)
	if uint64(s.p.Limits.OpenFiles) >= lim.Cur {
		return &invalidError{fmt.Errorf("limits.open_files %d: must be below %d, this process's own RLIMIT_NOFILE (raise it with ulimit -n)", s.p.Limits.OpenFiles, lim.Cur)}
	}
	if uint64(hi+1) >= lim.Cur {
		return fmt.Errorf("the jail's descriptors reach %d, this process's own RLIMIT_NOFILE (%d) less one: the listener's socket has no number left above them (raise it with ulimit -n)", hi, lim.Cur)
	}
	n := max(s.p.Limits.OpenFiles, int(min(64, lim.Cur-1)))
	if hi >= n {
		// Above the jail's descriptors, at a round number: a filter that
		// refuses by default holds it, and each number is a filter of its
		// own to compile and cache (a batch's jails hold many).
		if n = (hi/1024 + 1) * 1024; uint64(n) >= lim.Cur {
			n = hi + 1
		}
	}
	s.plan.notifyFd = uintptr(n)
	prog, err := s.compiledFilter()
	if err != nil {
		return err
	}
	s.prog = prog
	s.plan.filter = &sockFprog{len: uint16(len(prog)), filter: &prog[0]}
	s.plan.filterFlags = unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
	if s.in.SeccompLog {
		// A thread waiting for the answer to a trapped call is not woken by
		// the SIGSYS the supervisor sends it first (logged): the signal
		// comes with the answer, once, as the filter's own trap's does. A
		// signal that ended the wait would have the call restarted, and
		// trapped again, without end. (Linux 5.19; log mode's trap needs
		// 6.9 anyway.)
		s.plan.filterFlags |= unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
	}

	s.plan.iobuf[0] = 'L'
	s.plan.iov.Base = &s.plan.iobuf[0]
	s.plan.iov.SetLen(1)
	s.plan.cmsg = unix.UnixRights(0)
	s.plan.cmsgFd = unix.CmsgLen(0)
	s.plan.msg.Iov = &s.plan.iov
	s.plan.msg.SetIovlen(1)
	s.plan.msg.Control = &s.plan.cmsg[0]
	s.plan.msg.SetControllen(len(s.plan.cmsg))
	return nil
}

// filterOrder says where pid 2 loads its filter, and its limits.
//
// early: before the init has built the root (or, prepared, before its
// program is known), which takes the load (some 0.1-0.2 ms: the kernel
// checks and compiles the program) out of the run's path; only when the
// filter allows every system call of pid 2's last steps (its limits, the
// wait for the root, its working directory and stdio; prepared: the ready
// report and readCommand; the signal mask, execve) whatever their
// arguments that are not known ahead. Log mode records every refusal, so
// its filter is loaded last.
//
// The limits come after the filter's load whenever the filter allows
// them (early, or limitsLate): the listener is then sent while pid 2's
// RLIMIT_NOFILE is still this process's. The kernel refuses to send a
// descriptor (ETOOMANYREFS) for a process whose user has more descriptors
// in flight in unix sockets than its RLIMIT_NOFILE, and rootless every
// jail runs as the caller: another jail can hold that many (as root each
// jail is a host user of its own, hostIDs).
func (s *supervisor) filterOrder() (early, limitsLate bool) {
	if s.plan.filter == nil {
		return false, false
	}
	if !s.in.SeccompLog && !s.prepared && seccomp.IsDefault(s.p.Seccomp) {
		return true, false // the default profile allows them all (TestDefaultProfileEarly): 0.04 ms to find out
	}
	spec, err := seccomp.SpecOf(s.p.Seccomp)
	if err != nil {
		return false, false
	}
	limits := spec.AllowsAll(s.limitCalls())
	if !s.in.SeccompLog && limits && spec.AllowsAll(s.lastCalls()) {
		return true, false
	}
	return false, limits
}

// lastCalls are the system calls of pid 2's last steps but its limits'.
func (s *supervisor) lastCalls() []seccomp.Call {
	c := s.plan
	calls := []seccomp.Call{
		{Name: "futex", Args: [6]uint64{0, futexWaitPrivate}, Known: 1 << 1},
		{Name: "chdir"}, {Name: "dup3"}, {Name: "close_range"},
		{Name: "write"}, {Name: "exit_group"}, {Name: "execve"},
		{Name: "rt_sigprocmask", Args: [6]uint64{sigSetmask, 0, 0, 8}, Known: 1<<0 | 1<<2 | 1<<3},
	}
	if s.early != nil { // pid 2 of an early init takes the caller's CPUs back (spread)
		calls = append(calls, seccomp.Call{Name: "sched_setaffinity"})
	}
	if c.debug {
		calls = append(calls, seccomp.Call{Name: "clock_gettime"})
	}
	if s.prepared {
		calls = append(calls,
			seccomp.Call{Name: "read", Args: [6]uint64{uint64(c.goR)}, Known: 1}, seccomp.Call{Name: "close"},
			seccomp.Call{Name: "recvmsg", Args: [6]uint64{uint64(c.notifySock), 0, syscall.MSG_CMSG_CLOEXEC | syscall.MSG_DONTWAIT}, Known: 1<<0 | 1<<2},
			seccomp.Call{Name: "openat", Args: [6]uint64{uint64(atFDCWD), 0, syscall.O_WRONLY | syscall.O_CREAT | syscall.O_EXCL | syscall.O_NOFOLLOW | syscall.O_CLOEXEC, uint64(c.fileMode)}, Known: 1<<0 | 1<<2 | 1<<3})
	}
	return calls
}

// limitCalls are setLimits' system calls: prlimit64 on pid 2 itself, of
// any resource (an early init's rlimits are known only after its filter's
// place is).
func (s *supervisor) limitCalls() []seccomp.Call {
	return []seccomp.Call{{Name: "prlimit64", Args: [6]uint64{0, 0, 0, 0}, Known: 1<<0 | 1<<3}}
}

func cpuQuota(cpus float64) string {
	if cpus == 0 {
		return ""
	}
	return fmt.Sprintf(", a quota of %g CPUs", cpus)
}

// compiledFilter returns the policy's filter: the embedded default profile,
// or the policy's own rules compiled (or found in the cache).
func (s *supervisor) compiledFilter() ([]unix.SockFilter, error) {
	if seccomp.IsDefault(s.p.Seccomp) && !s.in.SeccompLog {
		s.log("seccomp: the default profile (embedded)")
		s.enforced["seccomp"] = "default profile"
		return seccomp.Default()
	}
	spec, err := seccomp.SpecOf(s.p.Seccomp)
	if err == nil {
		err = seccomp.CheckNames(spec)
	}
	if err != nil {
		return nil, &invalidError{err}
	}
	if spec.DefaultAction != policy.ActAllow {
		spec.SetupFd = int(s.plan.notifyFd)
	}
	spec.LogMode = s.in.SeccompLog
	s.spec = spec
	prog, src, err := seccomp.Load(spec)
	if err != nil {
		var ce *seccomp.CompileError
		if errors.As(err, &ce) {
			return nil, &invalidError{err}
		}
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	prog = seccomp.WithSetupSend(prog, int(s.plan.notifyFd))
	s.log("seccomp: %d instructions (%s), default action %s, %d rules", len(prog), src, spec.DefaultAction, len(spec.Rules))
	s.enforced["seccomp"] = fmt.Sprintf("%s profile and %d rules of the policy, default action %s", s.p.Seccomp.Profile, len(s.p.Seccomp.Rules), spec.DefaultAction)
	return prog, nil
}
