// Package jail runs one program in a jail: new user, pid, mount, ipc, uts,
// cgroup and network namespaces, a fresh root on tmpfs, limits, and an exact
// verdict. The supervisor (this file) is the parent side; the child side is
// child_linux.go.
package jail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/jail/seccomp"
	"github.com/gojail/gojail/limits"
	"github.com/gojail/gojail/policy"
)

// Input is what one run executes.
type Input struct {
	// Code is the submitted file, copied into the work directory and run
	// with the policy's command. Nil when Program is set.
	Code []byte
	// Program is a program that exists inside the jail, run with Args (the
	// exec preset's "--" form); a path inside the jail.
	Program string
	// Args follow the command.
	Args []string
	// Stdin is a host file read as the program's standard input; empty
	// means an empty input (reads see EOF at once).
	Stdin string
	// Log, when set, is told every isolation step in plain words (--debug).
	Log func(format string, args ...any)
	// Started, when set, is called once the jail has been released.
	Started func()
	// SeccompLog runs the filter in log mode: every call the policy refuses
	// is recorded in the result, then answered as the policy would.
	SeccompLog bool
}

// Run runs in in a jail under policy p, which the caller has validated, and
// reports what happened. It always returns a result; setup failures are
// internal_error (or invalid_input when the input itself is at fault).
func Run(ctx context.Context, p *policy.Policy, in Input) *Result {
	s := &supervisor{p: p, in: in, log: in.Log, enforced: map[string]string{}}
	if s.log == nil {
		s.log = func(string, ...any) {}
	}
	defer s.closeAll()
	res, err := s.run(ctx)
	if err != nil {
		status := StatusInternalError
		var inv *invalidError
		if errors.As(err, &inv) {
			status = StatusInvalidInput
		}
		res = Failed(status, err)
		res.Enforced = s.enforced
	}
	return res
}

// invalidError marks an error that is the input's fault, not gojail's.
type invalidError struct{ err error }

func (e *invalidError) Error() string { return e.err.Error() }
func (e *invalidError) Unwrap() error { return e.err }

// supervisor is the parent side of one run.
type supervisor struct {
	p        *policy.Policy
	in       Input
	log      func(string, ...any)
	enforced map[string]string

	plan     *childPlan
	prog     []unix.SockFilter // the seccomp filter the plan points to
	fds      []int             // to close when the run ends
	cg       limits.Cgroup     // nil when no cgroup could be used
	inCgroup bool              // the child was cloned inside its cgroup
	pid      int
	pidfd    int32 // set by clone3 (CLONE_PIDFD)
	started  time.Time

	mu          sync.Mutex
	killed      string       // why the supervisor killed the jail, first reason wins
	hardKill    *time.Timer  // SIGKILL for an init that does not stop when asked
	blocked     string       // the system call the filter stopped, in words
	spec        seccomp.Spec // the filter's rules, for log mode
	rlimitNames []string     // the init's rlimits, by index, for errors
	events      []SeccompEvent
}

// The reasons the supervisor kills a jail.
const (
	killWall    = "wall"
	killCPU     = "cpu"
	killOutput  = "output"
	killContext = "context"
	killSyscall = "syscall"
)

func (s *supervisor) run(ctx context.Context) (*Result, error) {
	plan, err := s.prepare()
	if err != nil {
		return nil, err
	}
	s.plan = plan
	stdoutR, stderrR, reportR, syncW, err := s.pipes()
	if err != nil {
		return nil, err
	}

	if err := s.cgroup(); err != nil {
		return nil, err
	}
	notifyR, err := s.filter()
	if err != nil {
		return nil, err
	}
	plan.cloneArgs.pidfd = uint64(uintptr(unsafe.Pointer(&s.pidfd)))
	if s.cg != nil && s.cg.IntoFd() >= 0 {
		// The child starts inside its cgroup (Linux 5.7).
		plan.cloneArgs.flags |= unix.CLONE_INTO_CGROUP
		plan.cloneArgs.cgroup = uint64(s.cg.IntoFd())
	}

	s.log("creating namespaces: %s", nsNames(plan.cloneArgs.flags|uint64(plan.unshareFlags)))
	pid, err := s.fork()
	if err != nil {
		return nil, err
	}
	s.pid = pid
	// The child's ends belong to it now.
	for _, fd := range []int{plan.syncR, plan.reportW, plan.ctlR, plan.stdio[0], plan.stdio[1], plan.stdio[2], plan.notifySock} {
		s.closeFd(fd)
	}
	if s.cg != nil && !s.inCgroup {
		if err := s.cg.Enter(pid); err != nil {
			s.abort(syncW)
			return nil, fmt.Errorf("put the jail in its cgroup: %w", err)
		}
	}

	ids := hostIDs(s.p.Run.UID, s.p.Run.GID)
	s.log("user namespace: uid %d and gid %d inside are %d and %d on the host", ids.uidIn, ids.gidIn, ids.uidOut, ids.gidOut)
	if err := ids.write(pid); err != nil {
		s.abort(syncW)
		return nil, err
	}

	// Release the child: from here on it runs the setup and the program.
	s.started = time.Now()
	if _, err := syscall.Write(syncW, []byte{'r'}); err != nil {
		s.abort(syncW)
		return nil, fmt.Errorf("release the jail: %w", err)
	}
	s.closeFd(syncW)
	if s.in.Started != nil {
		s.in.Started()
	}
	return s.watch(ctx, stdoutR, stderrR, reportR, notifyR), nil
}

// fork clones the jail's init, straight into its cgroup: on v2 with
// CLONE_INTO_CGROUP, on v1 from a thread that has joined the cgroup and
// leaves it again. The thread is locked meanwhile, and PDEATHSIG is tied to
// it (it outlives the run: Go does not end an unlocked thread).
func (s *supervisor) fork() (int, error) {
	runtime.LockOSThread()
	var leave func() error
	if s.cg != nil && s.plan.cloneArgs.flags&unix.CLONE_INTO_CGROUP == 0 {
		var err error
		if leave, err = s.cg.JoinThread(); err != nil {
			runtime.UnlockOSThread()
			return 0, fmt.Errorf("join the cgroup: %w", err)
		}
	}
	s.inCgroup = s.cg != nil && (leave != nil || s.plan.cloneArgs.flags&unix.CLONE_INTO_CGROUP != 0)
	pid, errno := forkChild(s.plan)
	if leave != nil {
		if err := leave(); err != nil {
			// This thread would stay in the jail's cgroup: it is never
			// unlocked, so Go ends it when this goroutine ends.
			if errno == 0 {
				unix.PidfdSendSignal(int(s.pidfd), unix.SIGKILL, nil, 0)
				s.pid = pid
				s.reap()
			}
			return 0, fmt.Errorf("leave the cgroup: %w", err)
		}
	}
	runtime.UnlockOSThread()
	runtime.KeepAlive(s.plan)
	if errno != 0 {
		return 0, fmt.Errorf("clone3: %w%s", errno, cloneHint(errno))
	}
	return pid, nil
}

// prepare turns the policy and input into the child's plan.
func (s *supervisor) prepare() (*childPlan, error) {
	p := s.p
	c := &childPlan{
		// The child makes the other namespaces itself while the supervisor
		// writes its maps, and the cgroup namespace once it has been
		// released, inside its cgroup (see child_linux.go).
		cloneArgs: cloneArgs{
			flags:      syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | unix.CLONE_PIDFD,
			exitSignal: uint64(syscall.SIGCHLD),
		},
		unshareFlags: syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
		uid:          uintptr(p.Run.UID),
		gid:          uintptr(p.Run.GID),
		clearGroups:  os.Geteuid() == 0,
		attachAt:     cstr("/tmp"),
		rootOpts:     tmpfsOpts(1<<20, 1024, 0o755),
		hostname:     []byte(p.Run.Hostname),
		workdir:      cstr(p.Run.Workdir),
		dot:          cstr("."),
		lastCap:      uintptr(lastCap()),
		ignored:      ignoredSignals(),
		scrub:        argvAndEnviron(),
	}
	switch p.Net.Mode {
	case policy.NetNone:
		c.unshareFlags |= syscall.CLONE_NEWNET
		s.log("network: a new network namespace with no interface up")
	case policy.NetLoopback:
		c.unshareFlags |= syscall.CLONE_NEWNET
		c.loUp = true
		copy(c.ifreq[:], "lo")
		*(*uint16)(unsafe.Pointer(&c.ifreq[unix.IFNAMSIZ])) = unix.IFF_UP
		s.log("network: a new network namespace with only loopback up")
	case policy.NetHost:
		s.log("network: the host's network (no network namespace)")
	}
	s.enforced["network"] = p.Net.Mode

	var code []byte
	argv := []string{}
	if s.in.Program != "" {
		argv = append(argv, s.in.Program)
	} else {
		code = s.in.Code
		if code == nil {
			code = []byte{}
		}
		file := strings.TrimSuffix(p.Run.Workdir, "/") + "/" + p.Run.File
		for _, a := range p.Run.Command {
			argv = append(argv, strings.ReplaceAll(a, "{file}", file))
		}
	}
	argv = append(argv, s.in.Args...)
	c.path = cstr(argv[0])
	c.argv = cstrv(argv)
	c.envv = cstrv(p.Run.Env)
	s.log("program: %q with %d environment variables, as uid %d in %s", argv, len(p.Run.Env), p.Run.UID, p.Run.Workdir)

	ops, err := buildMounts(p, code)
	if err != nil {
		return nil, &invalidError{err}
	}
	c.ops = ops
	for _, op := range ops {
		s.log("root: %s %s", opVerb[op.kind], op.desc)
	}

	s.enforced["wall_time"] = "supervisor"
	s.enforced["output"] = "supervisor"
	s.enforced["file_size"] = "rlimit"
	return c, nil
}

// cgroup creates the run's cgroup and chooses the rlimits. Without a
// usable cgroup it falls back to rlimits and says in "enforced" what is
// weaker, and in --debug why.
func (s *supervisor) cgroup() error {
	l := &s.p.Limits
	cg, err := limits.New(limits.Spec{Memory: int64(l.Memory), Pids: l.Pids + 1, CPUs: l.CPUs}) // +1: the jail's init
	var no *limits.ErrNoCgroup
	switch {
	case err == nil:
		s.cg = cg
		m := cg.Mechanism()
		s.log("%s: memory %s (swap off), %d processes (+1 for init)%s", m, l.Memory, l.Pids, cpuQuota(l.CPUs))
		s.enforced["memory"], s.enforced["pids"], s.enforced["cpu_time"] = m, m, m+"+rlimit"
		if l.CPUs > 0 {
			s.enforced["cpus"] = m
		}
	case errors.As(err, &no):
		s.log("no cgroup, falling back to rlimits: %s", no.Reason)
		s.enforced["pids"] = "rlimit-nproc"
		s.enforced["cpu_time"] = "rlimit-per-process (no cgroup: each process may use the limit)"
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

// filter loads the policy's compiled seccomp filter and opens the socket
// on which the jail sends the filter's listener.
func (s *supervisor) filter() (int, error) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return -1, fmt.Errorf("getrlimit: %w", err)
	}
	s.plan.notifyFd = uintptr(min(lim.Cur, 65536) - 1)
	if uint64(s.p.Limits.OpenFiles) >= uint64(s.plan.notifyFd) {
		return -1, &invalidError{fmt.Errorf("limits.open_files %d: must be below %d, this process's own RLIMIT_NOFILE", s.p.Limits.OpenFiles, s.plan.notifyFd)}
	}
	prog, err := s.compiledFilter()
	if err != nil {
		return -1, err
	}
	s.prog = prog
	s.plan.filter = &sockFprog{len: uint16(len(prog)), filter: &prog[0]}

	var sp [2]int
	if sp, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0); err != nil {
		return -1, fmt.Errorf("socketpair: %w", err)
	}
	s.plan.notifySock = s.keep(sp[1])
	s.plan.iobuf[0] = 'L'
	s.plan.iov.Base = &s.plan.iobuf[0]
	s.plan.iov.SetLen(1)
	s.plan.cmsg = unix.UnixRights(0)
	s.plan.cmsgFd = unix.CmsgLen(0)
	s.plan.msg.Iov = &s.plan.iov
	s.plan.msg.SetIovlen(1)
	s.plan.msg.Control = &s.plan.cmsg[0]
	s.plan.msg.SetControllen(len(s.plan.cmsg))
	return s.keep(sp[0]), nil
}

func cpuQuota(cpus float64) string {
	if cpus == 0 {
		return ""
	}
	return fmt.Sprintf(", a quota of %g CPUs", cpus)
}

var opVerb = map[opKind]string{opMkdir: "mkdir", opSymlink: "symlink", opFile: "write", opBind: "bind", opFS: "mount"}

// pipes opens the child's stdio, the release pipe and the report pipe. The
// child's ends are kept at 3 or above so that its dup3 onto 0-2 is safe.
func (s *supervisor) pipes() (stdoutR, stderrR, reportR, syncW int, err error) {
	c := s.plan
	pair := func(what string) (r, w int, err error) {
		var p [2]int
		if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
			return -1, -1, fmt.Errorf("pipe for %s: %w", what, err)
		}
		r, w = s.keep(p[0]), s.keep(p[1])
		return r, w, nil
	}
	if c.syncR, syncW, err = pair("release"); err != nil {
		return
	}
	c.syncW = syncW
	if c.ctlR, c.ctlW, err = pair("control"); err != nil {
		return
	}
	var r int
	if r, c.reportW, err = pair("report"); err != nil {
		return
	}
	reportR = r
	if r, c.stdio[1], err = pair("stdout"); err != nil {
		return
	}
	stdoutR = r
	if r, c.stdio[2], err = pair("stderr"); err != nil {
		return
	}
	stderrR = r
	stdin := "/dev/null"
	if s.in.Stdin != "" {
		stdin = s.in.Stdin
	}
	fd, err := syscall.Open(stdin, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, -1, -1, -1, &invalidError{fmt.Errorf("--stdin %s: %w", stdin, err)}
	}
	c.stdio[0] = s.keep(fd)
	c.keepLo, c.keepHi = min(c.reportW, c.ctlR), max(c.reportW, c.ctlR)
	return
}

// keep records fd for closing and moves it to 3 or above.
func (s *supervisor) keep(fd int) int {
	if fd < 3 {
		if nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3); err == nil {
			syscall.Close(fd)
			fd = nfd
		}
	}
	s.fds = append(s.fds, fd)
	return fd
}

func (s *supervisor) closeFd(fd int) {
	for i, f := range s.fds {
		if f == fd {
			syscall.Close(fd)
			s.fds[i] = -1
		}
	}
}

func (s *supervisor) closeAll() {
	for _, fd := range s.fds {
		if fd >= 0 {
			syscall.Close(fd)
		}
	}
	s.fds = nil
	if s.pidfd > 0 {
		syscall.Close(int(s.pidfd))
	}
	if s.cg != nil {
		if err := s.cg.Remove(); err != nil {
			s.log("%v", err)
		}
	}
}

// abort kills a child that was never released and reaps it.
func (s *supervisor) abort(syncW int) {
	s.closeFd(syncW) // EOF on the release pipe: the child exits by itself
	unix.PidfdSendSignal(int(s.pidfd), unix.SIGKILL, nil, 0)
	s.reap()
}

func (s *supervisor) reap() {
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(s.pid, &ws, 0, nil); err != syscall.EINTR {
			return
		}
	}
}

// kill ends the whole jail, once, for the first reason given. The jail's
// init is asked first, so that it kills and reaps every process and their
// usage is counted; if it has not ended within a second, it is killed, which
// makes the kernel kill every process of its pid namespace.
func (s *supervisor) kill(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.killed != "" {
		return
	}
	s.killed = reason
	s.log("stopping the jail: %s", reason)
	syscall.Write(s.plan.ctlW, []byte{'k'})
	s.hardKill = time.AfterFunc(time.Second, func() {
		s.log("the jail's init did not stop within 1s: SIGKILL")
		unix.PidfdSendSignal(int(s.pidfd), unix.SIGKILL, nil, 0)
		if s.cg != nil {
			s.cg.Kill()
		}
	})
}

// watch waits for the jail to end, enforcing the wall-clock and output
// limits, then collects its output, reports and figures into a verdict.
// It is one loop on one thread: ppoll on the output pipes and the report
// pipe, with the wall-clock deadline as its timeout. The report pipe reaches
// EOF when the jail's init exits, the output pipes when the last process of
// the jail does; init kills and reaps the whole tree before it exits.
func (s *supervisor) watch(ctx context.Context, stdoutR, stderrR, reportR, notifyR int) *Result {
	l := &s.p.Limits
	if ctx.Done() != nil {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-ctx.Done():
				s.kill(killContext)
			case <-done:
			}
		}()
	}

	streams := [3]stream{
		{fd: stdoutR, limit: int64(l.Output)},
		{fd: stderrR, limit: int64(l.Output)},
		{fd: reportR, limit: 1 << 16}, // a few 24-byte records
	}
	// Besides the streams: the socket that brings the filter's listener,
	// then the listener itself.
	const sockIdx, listenIdx = 3, 4
	notify := [2]int{notifyR, -1}
	defer func() {
		if notify[1] >= 0 {
			syscall.Close(notify[1])
		}
	}()
	var pfd [5]unix.PollFd
	chunk := make([]byte, 64<<10)
	deadline := s.started.Add(l.WallTime.Std())
	cpuCheck := s.nextCPUCheck(0)
	for open := 3; open > 0; {
		for i := range streams {
			pfd[i] = unix.PollFd{Fd: int32(streams[i].fd), Events: unix.POLLIN}
		}
		pfd[sockIdx] = unix.PollFd{Fd: int32(notify[0]), Events: unix.POLLIN}
		pfd[listenIdx] = unix.PollFd{Fd: int32(notify[1]), Events: unix.POLLIN}
		var ts *unix.Timespec
		if !s.isKilled() {
			now := time.Now()
			if !now.Before(deadline) {
				s.kill(killWall)
				continue
			}
			wake := deadline
			if s.cg != nil && !now.Before(cpuCheck) {
				used, err := s.cg.CPU()
				if err == nil && used >= l.CPUTime.Std() {
					s.kill(killCPU)
					continue
				}
				cpuCheck = s.nextCPUCheck(used)
			}
			if s.cg != nil && cpuCheck.Before(wake) {
				wake = cpuCheck
			}
			t := unix.NsecToTimespec(wake.Sub(now).Nanoseconds())
			ts = &t
		}
		if _, err := unix.Ppoll(pfd[:], ts, nil); err != nil && err != unix.EINTR {
			s.log("ppoll: %v", err)
			s.kill(killContext)
			break
		}
		if pfd[sockIdx].Revents != 0 {
			notify[1] = receiveListener(notify[0])
			notify[0] = -1 // one listener per run
		}
		if pfd[listenIdx].Revents&unix.POLLIN != 0 {
			s.notification(notify[1])
		} else if pfd[listenIdx].Revents != 0 { // no process left under the filter
			syscall.Close(notify[1])
			notify[1] = -1
		}
		for i := range streams {
			st := &streams[i]
			if st.fd < 0 || pfd[i].Revents == 0 {
				continue
			}
			n, err := syscall.Read(st.fd, chunk)
			if n > 0 {
				if st.add(chunk[:n]) && i < 2 && l.OutputAction == policy.OutputKill {
					s.kill(killOutput)
				}
				continue
			}
			if err == syscall.EINTR || err == syscall.EAGAIN {
				continue
			}
			st.fd = -1 // EOF, or an error that ends the stream
			open--
		}
	}
	var ws syscall.WaitStatus
	var ru syscall.Rusage
	for {
		if _, err := syscall.Wait4(s.pid, &ws, 0, &ru); err != syscall.EINTR {
			break
		}
	}
	wall := time.Since(s.started)
	s.mu.Lock()
	if s.hardKill != nil {
		s.hardKill.Stop()
	}
	killed := s.killed
	s.mu.Unlock()

	out, errOut := &streams[0], &streams[1]
	r := &Result{
		Stdout: string(out.buf), Stderr: string(errOut.buf),
		StdoutTruncated: out.truncated, StderrTruncated: errOut.truncated,
		StdoutBytes: out.total, StderrBytes: errOut.total,
		WallMs:          ms(wall),
		CPUMs:           ms(time.Duration(ru.Utime.Nano() + ru.Stime.Nano())),
		MemoryPeakBytes: ru.Maxrss * 1024,
		Enforced:        s.enforced,
		ExitCode:        -1,
	}
	var usage limits.Usage
	if s.cg != nil {
		var err error
		if usage, err = s.cg.Usage(); err != nil {
			s.log("read the cgroup's figures: %v", err)
		}
		r.CPUMs = ms(usage.CPU)
		if usage.MemoryPeak > 0 {
			r.MemoryPeakBytes = usage.MemoryPeak
		}
	}
	r.SeccompLog = s.events
	s.verdict(r, ws, decodeReports(streams[2].buf), killed, usage)
	s.log("verdict: %s (exit code %d, signal %q), wall %.1f ms, cpu %.1f ms", r.Status, r.ExitCode, r.Signal, r.WallMs, r.CPUMs)
	return r
}

// nextCPUCheck says when the tree can first have used its CPU-time limit,
// having used used: all of the host's CPUs busy for what is left. The
// supervisor reads the cgroup's figure then, and not before.
func (s *supervisor) nextCPUCheck(used time.Duration) time.Time {
	left := (s.p.Limits.CPUTime.Std() - used) / time.Duration(runtime.NumCPU())
	return time.Now().Add(max(left, time.Millisecond))
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
	s.log("seccomp: %d instructions (%s), default action %s, %d rules", len(prog), src, spec.DefaultAction, len(spec.Rules))
	s.enforced["seccomp"] = fmt.Sprintf("%s profile and %d rules of the policy, default action %s", s.p.Seccomp.Profile, len(s.p.Seccomp.Rules), spec.DefaultAction)
	return prog, nil
}

// receiveListener takes the seccomp listener the jail sent with SCM_RIGHTS;
// -1 if none came.
func receiveListener(sock int) int {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return -1
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return -1
	}
	return fds[0]
}

// seccompNotif is struct seccomp_notif (seccomp_unotify(2)).
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

// The audit architectures of the x86 system-call ABIs.
const (
	auditArchX8664 = 0xc000003e
	auditArchI386  = 0x40000003
	x32SyscallBit  = 0x40000000
)

// notification reads what the filter stopped: a call a kill rule names or a
// call of a foreign ABI. The call never runs: the caller waits for an answer
// that never comes, and the jail is killed.
func (s *supervisor) notification(listener int) {
	var n seccompNotif
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n))); e != 0 {
		return // the caller died meanwhile
	}
	var what string
	switch {
	case n.arch == auditArchI386:
		what = fmt.Sprintf("i386 system call %d (int 0x80): foreign system-call ABIs are killed", n.nr)
	case n.arch == auditArchX8664 && n.nr&x32SyscallBit != 0:
		what = fmt.Sprintf("x32 system call %s: foreign system-call ABIs are killed", seccomp.Name(int(n.nr&^x32SyscallBit)))
	case n.arch == auditArchX8664 && s.spec.LogMode:
		if s.logged(listener, &n) {
			return
		}
		what = fmt.Sprintf("%s: the seccomp policy kills it", seccomp.Name(int(n.nr)))
	case n.arch == auditArchX8664:
		what = fmt.Sprintf("%s: the seccomp policy kills it", seccomp.Name(int(n.nr)))
	default:
		what = fmt.Sprintf("system call %d of architecture %#x: foreign system-call ABIs are killed", n.nr, n.arch)
	}
	s.mu.Lock()
	if s.blocked == "" {
		s.blocked = what
	}
	s.mu.Unlock()
	s.kill(killSyscall)
}

// seccompNotifResp is struct seccomp_notif_resp.
type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// logged records a refusal in log mode and answers it as the policy would:
// an errno, or (log and trap) letting the call run, a trap being recorded
// as one. It returns false for a kill, which the caller carries out.
func (s *supervisor) logged(listener int, n *seccompNotif) bool {
	action, errno, rule := s.spec.Decide(int(n.nr), n.args)
	name := seccomp.Name(int(n.nr))
	desc := action
	if action == policy.ActErrno {
		desc += " " + unix.ErrnoName(unix.Errno(errno))
	}
	where := "the default action"
	if rule >= 0 {
		where = s.spec.RuleName(rule)
	}
	s.record(SeccompEvent{Syscall: name, Action: desc, Rule: where})
	resp := seccompNotifResp{id: n.id}
	switch action {
	case policy.ActKill:
		return false
	case policy.ActErrno:
		resp.error = -int32(errno)
	default: // allow (by a rule), log, trap: the call runs
		resp.flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
	}
	unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
	return true
}

// record counts one refusal of log mode.
func (s *supervisor) record(e SeccompEvent) {
	for i := range s.events {
		if s.events[i].Syscall == e.Syscall && s.events[i].Action == e.Action {
			s.events[i].Count++
			return
		}
	}
	e.Count = 1
	s.events = append(s.events, e)
}

func (s *supervisor) isKilled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.killed != ""
}

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
			if IsExecNotFound(err) {
				r.Status, r.Error = StatusInvalidInput, fmt.Sprintf("cannot run %s inside the jail: %v", goString(s.plan.path), err.Errno)
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
		case killSyscall:
			r.Status, r.Error = StatusSyscallBlocked, "blocked "+s.blocked
		case "":
			if usage.OOMKills > 0 {
				r.Status, r.Error = StatusMemoryLimit, fmt.Sprintf("memory limit of %s exceeded: the OOM killer ended the jail's init", l.Memory)
				break
			}
			r.Status, r.Error = StatusInternalError, fmt.Sprintf("the jail's init ended without a report (%s)", describeWait(initStatus))
			r.Signal = ""
		}
		return
	}
	ws := syscall.WaitStatus(exit.Status)
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
		case sig == syscall.SIGXCPU || (sig == syscall.SIGKILL && r.CPUMs >= cpuLimitMs):
			r.Status, r.Error = StatusTimeLimit, fmt.Sprintf("CPU-time limit of %s exceeded", l.CPUTime)
		case sig == syscall.SIGSYS:
			r.Status, r.Error = StatusSyscallBlocked, "killed by SIGSYS: a seccomp trap rule (or the program itself)"
		case sig == syscall.SIGXFSZ:
			r.Status, r.Error = StatusOutputLimit, fmt.Sprintf("file size limit of %s exceeded", l.FileSize)
		default:
			r.Status = StatusSignaled
		}
	default:
		r.Status, r.Error = StatusInternalError, "unexpected wait status "+describeWait(ws)
	}
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
		r.Error = fmt.Sprintf("memory limit of %s exceeded: the OOM killer ended %d process(es)", s.p.Limits.Memory, u.OOMKills)
	case s.cg != nil && u.MemoryHit > 0 && u.MemoryPeak >= limit-limit/10:
		r.Error = fmt.Sprintf("memory limit of %s reached: an allocation failed", s.p.Limits.Memory)
	case s.cg == nil && s.p.Limits.RlimitAS && allocFailure(r.Stderr):
		r.Error = fmt.Sprintf("memory limit of %s (address-space rlimit) reached: an allocation failed", s.p.Limits.Memory)
	default:
		return
	}
	r.Status = StatusMemoryLimit
}

// allocFailure reports whether stderr ends with a runtime's message for a
// refused allocation (Python, glibc and bash, node).
func allocFailure(stderr string) bool {
	tail := stderr[max(0, len(stderr)-4096):]
	for _, m := range []string{"MemoryError", "Cannot allocate memory", "cannot allocate memory", "out of memory", "Out of memory", "std::bad_alloc"} {
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
	case stepBind, stepSetattr, stepMkdir, stepSymlink, stepWriteFile, stepMountPoint, stepMoveMount, stepFsopen, stepFsconfig, stepFsmount:
		if e.Index < len(s.plan.ops) {
			e.Detail = s.plan.ops[e.Index].desc
		}
	case stepRlimit:
		if e.Index < len(s.rlimitNames) {
			e.Detail = s.rlimitNames[e.Index]
		}
	case stepExec:
		e.Detail = goString(s.plan.path)
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

func goString(p *byte) string {
	if p == nil {
		return ""
	}
	return unix.BytePtrToString(p)
}

// nsNames lists the namespaces in clone flags, for --debug.
func nsNames(flags uint64) string {
	var names []string
	for _, ns := range []struct {
		flag uint64
		name string
	}{{syscall.CLONE_NEWUSER, "user"}, {syscall.CLONE_NEWPID, "pid"}, {syscall.CLONE_NEWNET, "net"},
		{syscall.CLONE_NEWNS, "mount"}, {syscall.CLONE_NEWIPC, "ipc"}, {syscall.CLONE_NEWUTS, "uts"}, {unix.CLONE_NEWCGROUP, "cgroup"}} {
		if flags&ns.flag != 0 {
			names = append(names, ns.name)
		}
	}
	return strings.Join(names, ", ")
}

func cloneHint(errno syscall.Errno) string {
	switch errno {
	case syscall.EPERM, syscall.ENOSPC, syscall.EUSERS:
		return " (creating a user namespace was refused: check sysctl user.max_user_namespaces and kernel.unprivileged_userns_clone, or an AppArmor restriction on unprivileged user namespaces)"
	}
	return ""
}

// argvAndEnviron returns this process's argv and environment areas, where
// /proc/PID/cmdline and environ read them (proc(5): arg_start..arg_end,
// env_start..env_end of /proc/self/stat); Go's own os.Args and environment
// strings point into them. The jail's init blanks its copies.
func argvAndEnviron() [][]byte {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return nil
	}
	// Fields after the command name, which is in parentheses: field 3 on.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	num := func(field int) uintptr { // 1-based, as in proc(5)
		if field-3 >= len(f) {
			return 0
		}
		n, _ := strconv.ParseUint(f[field-3], 10, 64)
		return uintptr(n)
	}
	if len(os.Args) == 0 {
		return nil
	}
	p := unsafe.StringData(os.Args[0])
	start, end := num(48), num(49)
	if num(50) == end { // the environment follows argv, as the kernel lays them out
		end = num(51)
	}
	if os.Args[0] == "" || uintptr(unsafe.Pointer(p)) != start || end <= start || end-start > 1<<20 {
		return nil // not where the kernel says: leave it
	}
	return [][]byte{unsafe.Slice(p, end-start)}
}

// ignoredSignals lists the signals, real-time ones included, that this
// process was started with ignored (nohup, a shell's background job, a make
// that ignores signal 32): the program gets them back at their default.
func ignoredSignals() []uintptr {
	var sigs []uintptr
	for sig := uintptr(1); sig <= 64; sig++ {
		var old sigaction
		_, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, sig, 0, uintptr(unsafe.Pointer(&old)), 8, 0, 0)
		if e == 0 && old.handler == 1 { // SIG_IGN
			sigs = append(sigs, sig)
		}
	}
	return sigs
}

var (
	lastCapOnce sync.Once
	lastCapVal  int
)

// lastCap reads the kernel's highest capability number.
func lastCap() int {
	lastCapOnce.Do(func() {
		lastCapVal = 40 // CAP_CHECKPOINT_RESTORE, Linux 5.9
		if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
			var n int
			if _, err := fmt.Sscan(string(b), &n); err == nil && n > 0 && n < 64 {
				lastCapVal = n
			}
		}
	})
	return lastCapVal
}
