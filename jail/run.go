// Package jail runs one program in a jail: new user, pid, mount, ipc, uts,
// cgroup and network namespaces, a fresh root on tmpfs, limits, and an exact
// verdict. The supervisor (this file) is the parent side; the child side is
// child_linux.go.
package jail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
	"github.com/gojail/gojail/validate"
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
	// Stdin is a host file read as the program's standard input, "-" this
	// process's own; empty means an empty input (reads see EOF at once).
	Stdin string
	// Log, when set, is told every isolation step in plain words (--debug).
	Log func(format string, args ...any)
	// StdinData is the program's standard input given as bytes, for a
	// prepared jail (Prepared.Run), which gets a sealed copy, as a one-shot
	// run gets of a file; Stdin is ignored then.
	StdinData []byte
	// Started, when set, is called once the program has run for lateStart
	// (a shorter run ends before).
	Started func()
	// SeccompLog runs the filter in log mode: every call the policy refuses
	// is recorded in the result, then answered as the policy would.
	SeccompLog bool
	// WallTime and Output, when set, lower a prepared jail's wall-clock
	// and output limits for its run (Prepared.Run): the supervisor
	// enforces both, so any value under the policy's holds exactly.
	WallTime policy.Duration
	Output   policy.Size
	// Early is an init started before the run was known (StartEarly),
	// adopted when the policy wants the namespaces it made, else
	// discarded. Run owns it either way.
	Early *Early

	// Exiting says the caller exits once Run returns, through Exit (the
	// command line's one run). The jail's init, once it has reported every
	// process of the jail reaped, is then neither waited for nor reaped:
	// it exits, tearing the jail's namespaces down, once Exit's keeper has,
	// after the caller's own caller was told, and the host's reaper reaps
	// it. The run's descriptors are left to the exit too. Only the first
	// such run of a process, in the host's pid namespace (a container's
	// init may not reap what is orphaned to it), is run so; Prepared.Run
	// ignores it. Otherwise Run waits for the init and reaps it.
	Exiting bool
}

// Run runs in in a jail under policy p and reports what happened. The
// caller validates p (validate.Policy, which also checks its binds and
// seccomp rules on the host); Run itself refuses, as invalid_input, what
// would be unsafe unchecked (checkInput). It always returns a result;
// setup failures are internal_error (or invalid_input when the input
// itself is at fault).
func Run(ctx context.Context, p *policy.Policy, in Input) *Result {
	if err := checkInput(p, &in); err != nil {
		in.Early.Discard()
		return Failed(StatusInvalidInput, err)
	}
	s := &supervisor{p: p, in: in, log: in.Log, enforced: map[string]string{}, debug: in.Log != nil, listener: -1}
	s.in.Exiting = in.Exiting && claimExit()
	if s.log == nil {
		s.log = func(string, ...any) {}
	}
	defer s.closeAll()
	defer in.Early.Discard() // unless adopted
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

// checkInput refuses what a library caller could pass that the command
// line never does: a policy that fails the checks that read nothing of the
// host (validate.Structure: a run.file of "../.." would be written outside
// the jail's root), NUL bytes, and a program named by a path that is not
// a clean absolute one, or that is in /proc or /dev (/proc/self/exe, at
// pid 2's execve, is this process's own executable; validate.Program,
// which the command line runs, also resolves it within the binds).
func checkInput(p *policy.Policy, in *Input) error {
	if err := validate.Structure(p); err != nil {
		return err
	}
	return checkArgs(in)
}

// checkArgs is checkInput's part for the input alone: a prepared jail's
// policy was checked when it was made.
func checkArgs(in *Input) error {
	for _, a := range in.Args {
		if strings.ContainsRune(a, 0) {
			return errors.New("an argument holds a NUL byte")
		}
	}
	if pr := in.Program; pr != "" {
		if !filepath.IsAbs(pr) || filepath.Clean(pr) != pr || strings.ContainsRune(pr, 0) || strings.HasPrefix(pr, "/proc/") || strings.HasPrefix(pr, "/dev/") {
			return fmt.Errorf("program %q: give a clean absolute path inside the jail's binds, not in /proc or /dev", pr)
		}
	}
	return nil
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

	plan      *childPlan
	prog      []unix.SockFilter // the seccomp filter the plan points to
	fds       []int             // to close when the run ends
	cg        limits.Cgroup     // nil when no cgroup could be used
	early     *Early            // the early init adopted, nil for none
	joinPaths []string          // cgroup v1: the tasks files the child writes itself into
	joinTasks bool              // cgroup v1: the early init opened them (Early.cgroupMade)
	joinFirst int               // 1 when the child's message brings its stdin before them
	prepared  bool              // a jail made ahead of its program (Prepare)
	// ignoredLater: the plan's ignored signals come with the init (adopt).
	ignoredLater bool
	goW          int // prepared: the pipe that brings the program
	pid          int
	pidfd        int32 // set by clone3 (CLONE_PIDFD)
	started      time.Time
	cpuBase      time.Duration // prepared: the CPU time of its setup, which is not the program's
	reaped       bool          // the init has been waited for
	reported     bool          // the init has reported the program's end, every process reaped
	listener     int           // the seccomp listener, once received; -1 before
	sockDone     bool          // the listener's socket has brought its one message
	armed        bool          // armPoll has run
	outBytes     int           // the program's output kept, stdout and stderr
	debug        bool          // --debug: the child reports its steps
	monoFork     time.Duration // CLOCK_MONOTONIC just before the clone, for the child\'s marks
	np           netPoll       // waits on the jail's descriptors
	// stderrTail is the end of the program's stderr when it was cut at the
	// output limit (the verdict reads the program's last words there).
	stderrTail string
	program    string // prepared: the program, once known

	mu          sync.Mutex
	killed      string       // why the supervisor killed the jail, first reason wins
	ctlClosed   bool         // the control pipe is closed: kill must not write to its number
	closed      bool         // closeAll has run: the pidfd and cgroup are gone, nothing to kill
	hardKill    *time.Timer  // SIGKILL for an init that does not stop when asked
	blocked     string       // the system call the filter stopped, in words
	pollErr     error        // why waiting for the jail failed (killPoll)
	spec        seccomp.Spec // the filter's rules, for log mode
	rlimitNames []string     // the init's rlimits, by index, for errors
	events      []SeccompEvent
	eventAt     map[[2]string]int // events' index by system call and action
}

// maxEvents bounds a run's --seccomp-log entries: past maxEvents-1, one
// more counts every other call (a program calling thousands of unknown
// numbers, each its own entry, made the result megabytes).
const maxEvents = 256

// The reasons the supervisor kills a jail.
const (
	killWall    = "wall"
	killCPU     = "cpu"
	killOutput  = "output"
	killContext = "context"
	killPoll    = "poll" // waiting for the jail failed (pollErr)
	killSyscall = "syscall"
)

func (s *supervisor) run(ctx context.Context) (*Result, error) {
	fds, err := s.start(ctx)
	if err != nil {
		return nil, err
	}
	return s.watch(ctx, fds), nil
}

// jailFds are the supervisor's ends of a started jail's pipes.
type jailFds struct {
	stdoutR, stderrR, reportR, notifyR int
}

// start makes the jail and releases it: it runs its setup, then the program
// (or, prepared, waits for it). ctx bounds the wait for a FIFO's writer.
func (s *supervisor) start(ctx context.Context) (jailFds, error) {
	var none jailFds
	if err := ownProc(); err != nil {
		return none, err
	}
	// The init started early writes the cgroup's limits while this process
	// makes the plan (v1).
	if !s.prepared {
		s.in.Early.askLimits(s.cgSpec())
	}
	plan, err := s.prepare()
	if err != nil {
		return none, err
	}
	s.plan = plan
	e := s.adopt()
	s.early = e
	if e != nil {
		defer e.mem.free() // this process's view of the init's memory
	}
	fds, syncW, err := s.pipes(ctx, e)
	if err != nil {
		return none, err
	}
	if err := s.filter(); err != nil {
		return none, err
	}
	if !s.prepared {
		plan.earlyFilter, plan.limitsLate = s.filterOrder() // some 40 µs: not while the child waits
	}
	var (
		pid int
		cp  *childPlan
	)
	if e != nil {
		if ns := nsNames(e.cp.cloneArgs.flags | uint64(e.cp.unshareFlags)); e.atEntry {
			s.log("namespaces: %s, made by an init cloned at the process's entry; cgroup, by pid 2 in its cgroup", ns)
		} else {
			s.log("namespaces: %s, made by an init started early; cgroup, by pid 2 in its cgroup", ns)
		}
		pid, cp = e.pid, e.complete(plan)
	} else {
		// A new init keeps its own descriptors and closes every other first.
		ends := []int{plan.syncR, plan.reportW, plan.ctlR, plan.stdio[0], plan.stdio[1], plan.stdio[2], plan.notifySock}
		if s.prepared {
			ends = append(ends, plan.goR)
		}
		plan.keepFds = nil
		for _, fd := range ends {
			plan.keepFds = append(plan.keepFds, uintptr(fd))
		}
		slices.Sort(plan.keepFds)
		plan.cloneArgs.pidfd = uint64(uintptr(unsafe.Pointer(&s.pidfd)))
		s.log("creating namespaces: %s; cgroup, by pid 2 in its cgroup", nsNames(plan.cloneArgs.flags|uint64(plan.unshareFlags)))
		var ts unix.Timespec
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		s.monoFork = time.Duration(ts.Nano())
		var mem *childMem
		if pid, cp, mem, err = s.fork(); err != nil {
			return none, err
		}
		defer mem.free()
		// The child's ends belong to it now.
		for _, fd := range ends {
			s.closeFd(fd)
		}
	}
	s.pid = pid
	// A failure from here on may follow from the child's own (it makes its
	// namespaces meanwhile, and a dead child's maps cannot be written): the
	// child's report, when it wrote one, is the one to give.
	fail := func(err error) (jailFds, error) {
		s.abort(syncW)
		if b := readReports(fds.reportR); len(b) > 0 {
			for _, rep := range decodeReports(b) {
				if rep.Kind == reportError {
					return none, fmt.Errorf("jail setup failed: %w", s.childError(rep))
				}
			}
		}
		return none, err
	}
	// The cgroup is made while the init makes its namespaces (the network
	// one takes longest), and sent to it: on v2 the directory, which the
	// init clones pid 2 into; on v1 the hierarchies' tasks files, which pid
	// 2 writes itself into. An early init gets the program's stdin first.
	// On v1 it has made the cgroup's directories and, asked at the start
	// (askLimits), written the limits and opened the tasks files, which
	// pid 2 writes itself into (joinTasks); where it was not asked, the
	// cgroup comes after its release (lateJoin), made while it builds the
	// root, and pid 2 receives the message.
	late := e != nil && !limits.V2() && e.limits == nil
	joinFirst := 0
	if e != nil {
		joinFirst = 1
	}
	s.joinFirst = joinFirst
	join := func() error {
		if err := s.cgroup(); err != nil {
			return err
		}
		send, into := []int{}, false
		if e != nil {
			send = append(send, plan.stdio[0])
		}
		if s.cg != nil {
			if fd := s.cg.IntoFd(); fd >= 0 {
				send, into = append(send, fd), true
			} else if s.joinPaths = s.cg.TaskFiles(); s.joinTasks {
				// The early init has them open: pid 2 writes itself into
				// them as it starts.
				cp.joinTasks = true
			} else {
				tasks, err := openTaskFiles(s.joinPaths)
				defer closeFds(tasks)
				if err != nil {
					return err
				}
				send = append(send, tasks...)
			}
		}
		joinCount := len(send) - joinFirst
		if late {
			if err := cp.settleLate(joinCount, plan.rlimits, plan.nofile); err != nil {
				return err
			}
		} else {
			// Whether the filter allows every call of a prepared jail's
			// last steps depends on the rlimits, known now.
			if s.prepared {
				plan.earlyFilter, plan.limitsLate = s.filterOrder()
			}
			if err := cp.settle(joinFirst, joinCount, into, plan.rlimits, plan.nofile, plan.earlyFilter, plan.limitsLate); err != nil {
				return err
			}
		}
		if len(send) > 0 {
			if err := sendFds(fds.notifyR, send); err != nil {
				what := "the cgroup"
				if joinCount == 0 {
					what = "the program's stdin"
				} else if joinFirst > 0 {
					what = "the program's stdin and the cgroup"
				}
				return fmt.Errorf("send %s to the jail: %w", what, err)
			}
		}
		if e != nil {
			s.closeFd(plan.stdio[0]) // the init's now
		}
		return nil
	}
	if late {
		cp.lateJoin = true
		if err := cp.settle(joinFirst, 0, false, nil, rlimit{}, plan.earlyFilter, plan.limitsLate); err != nil {
			return fail(err)
		}
	} else if err := join(); err != nil {
		return fail(err)
	}
	if plan.earlyFilter {
		s.log("seccomp: loaded early (the filter allows every call of pid 2's last steps)")
	}

	ids := hostIDs(s.p.Run.UID, s.p.Run.GID)
	s.log("user namespace: uid %d and gid %d inside are %d and %d on the host", ids.uidIn, ids.gidIn, ids.uidOut, ids.gidOut)
	if err := ids.write(pid); err != nil {
		return fail(err)
	}

	// Release the child: from here on it runs the setup and the program.
	s.started = time.Now()
	if _, err := syscall.Write(syncW, []byte{'r'}); err != nil {
		return fail(fmt.Errorf("release the jail: %w", err))
	}
	s.closeFd(syncW)
	if late {
		if err := join(); err != nil {
			return fail(err)
		}
	}
	return fds, nil
}

// openTaskFiles opens the cgroup's v1 tasks files, for the child, which
// reads them once released: the kernel checks a write against the
// credentials of the file's opener, this process. The caller closes them.
func openTaskFiles(paths []string) ([]int, error) {
	var fds []int
	for _, p := range paths {
		fd, err := limits.Open(p, unix.O_WRONLY)
		if err != nil {
			return fds, fmt.Errorf("open %s: %w", p, err)
		}
		fds = append(fds, fd)
	}
	return fds, nil
}

// closeFds closes the descriptors that are not -1, with raw system calls
// (makeJailPipes).
func closeFds(fds []int) {
	for _, fd := range fds {
		if fd >= 0 {
			syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
		}
	}
}

// sendFds sends descriptors to the child, in one message on the
// listener's socket: an early init's stdin, the jail's cgroup.
func sendFds(sock int, fds []int) error {
	return unix.Sendmsg(sock, []byte{'J'}, unix.UnixRights(fds...), nil, 0)
}

// fork clones the jail's init (forkChild).
func (s *supervisor) fork() (int, *childPlan, *childMem, error) {
	pid, cp, mem, err := forkChild(s.plan, 0)
	if errno, ok := err.(syscall.Errno); ok {
		return 0, nil, nil, fmt.Errorf("clone3: %w%s", errno, cloneHint(errno))
	}
	return pid, cp, mem, err
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
		timerSlack:   callerSlack,
		exiting:      s.in.Exiting,
		clearGroups:  os.Geteuid() == 0,
		// The root tmpfs, the jail's user's: its init makes it before it
		// takes that user (becomeUser).
		rootOpts: append(tmpfsOpts(1<<20, 1024, 0o755),
			fsOpt{cstr("uid"), cstr(strconv.Itoa(p.Run.UID))}, fsOpt{cstr("gid"), cstr(strconv.Itoa(p.Run.GID))}),
		hostname: []byte(p.Run.Hostname),
		workdir:  cstr(p.Run.Workdir),
		debug:    s.debug,
		scrub:    argvAndEnviron(),
	}
	// An init cloned at the entry has the caller's ignored signals (adopt).
	if e := s.in.Early; e != nil && e.atEntry && !e.done {
		s.ignoredLater = true
	} else {
		c.ignored = ignoredSignals()
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
	if s.prepared {
		// The program comes later (readCommand): room for it.
		c.prepared = true
		c.fileName = cstr(p.Run.File)
		c.fileMode = 0o644
		if p.Run.Binary {
			c.fileMode = 0o755
		}
		c.blobLen, c.rawLen = commandMax+12, 4096 // see command
		argv = append(argv, "/prepared")
	} else if s.in.Program != "" {
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

var opVerb = map[opKind]string{opMkdir: "mkdir", opSymlink: "symlink", opFile: "write", opBind: "bind", opFS: "mount", opProc: "mount"}

// pipes takes the pipes an early init was cloned with, or makes a new
// init's (whose child ends are closed after its clone), and opens the
// program's stdin; a prepared jail's stdin and go pipes instead.
func (s *supervisor) pipes(ctx context.Context, e *Early) (fds jailFds, syncW int, err error) {
	c := s.plan
	var p jailPipes
	if e != nil {
		p = e.p // the supervisor's ends are this run's already (adopt)
	} else {
		if p, err = newJailPipes(); err != nil {
			return fds, -1, err
		}
		se, ce := p.supervisorEnds(), p.childEnds()
		s.fds = append(append(s.fds, se[:]...), ce[:]...)
	}
	c.syncR, c.ctlR, c.ctlW, c.reportW, c.stdio[1], c.stdio[2], c.notifySock = p.syncR, p.ctlR, p.ctlW, p.reportW, p.stdoutW, p.stderrW, p.sockC
	fds = jailFds{stdoutR: p.stdoutR, stderrR: p.stderrR, reportR: p.reportR, notifyR: p.sockS}
	if s.prepared {
		// Stdin is /dev/null unless the run sends the program's own
		// (recvStdin); the go pipe brings the program.
		null, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return fds, -1, fmt.Errorf("open /dev/null for the program's stdin: %w", err)
		}
		c.stdio[0] = s.keep(null)
		var p2 [2]int
		if err := syscall.Pipe2(p2[:], syscall.O_CLOEXEC); err != nil {
			return fds, -1, fmt.Errorf("pipe for go: %w", err)
		}
		c.goR, s.goW = s.keep(p2[0]), s.keep(p2[1])
		return fds, p.syncW, nil
	}
	var fd int
	if s.in.Stdin != "" {
		fd, err = openStdin(ctx, s.in.Stdin, s.p.Limits.WallTime.Std())
	} else if fd, err = syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0); err != nil {
		err = fmt.Errorf("open /dev/null for the program's stdin: %w", err)
	}
	if err != nil {
		if resourceShort(err) { // gojail's to report, not the input's fault
			return fds, -1, err
		}
		return fds, -1, &invalidError{err}
	}
	c.stdio[0] = s.keep(fd)
	return fds, p.syncW, nil
}

// resourceShort tells an error of a resource the host ran short of
// (descriptors, memory) from one of the input.
func resourceShort(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ENOMEM)
}

// openStdin opens --stdin's file for the program. Not one of /proc (or a
// magic link there): a path such as /proc/self/environ or /proc/self/fd/N
// would hand the jail this process's own environment or descriptors. A
// regular file is copied into a sealed memfd: the host's open file would
// let the program reopen it for writing through /proc/self/fd/0, or chmod
// it, with the permissions of the jail's user on the host (rootless, the
// caller, who usually owns it). The file is checked through an O_PATH
// descriptor, then opened through it; a FIFO is waited for until its
// writer writes or closes it, no longer than wait (the run's wall-clock
// limit) or ctx (openFIFO). A terminal is refused.
func openStdin(ctx context.Context, path string, wait time.Duration) (int, error) {
	if path == "-" {
		return ownStdin(ctx, wait)
	}
	at, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return -1, fmt.Errorf("--stdin %s: %w", path, err)
	}
	defer unix.Close(at)
	var fs unix.Statfs_t
	var st unix.Stat_t
	if err := unix.Fstatfs(at, &fs); err != nil {
		return -1, fmt.Errorf("--stdin %s: %w", path, err)
	}
	if fs.Type == unix.PROC_SUPER_MAGIC || fs.Type == unix.SYSFS_MAGIC {
		return -1, fmt.Errorf("--stdin %s is in /proc or /sys, whose files describe gojail itself or the host: give a file, a FIFO or a device", path)
	}
	if err := unix.Fstat(at, &st); err != nil {
		return -1, fmt.Errorf("--stdin %s: %w", path, err)
	}
	self := fmt.Sprintf("/proc/self/fd/%d", at)
	if st.Mode&unix.S_IFMT == unix.S_IFIFO {
		return openFIFO(ctx, path, self, wait)
	}
	fd, err := unix.Open(self, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("--stdin %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		// A device, but not a terminal: the jail would share it, its
		// settings and its pending input (the caller's, for /dev/tty).
		if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
			unix.Close(fd)
			return -1, fmt.Errorf("--stdin %s is a terminal, which the program would share with its other users (its settings, its pending input): give a file, a FIFO or another device", path)
		}
		return fd, nil
	}
	defer unix.Close(fd)
	m, err := sealedCopy(func(m int) error { return copyFd(m, fd) })
	if err != nil {
		return -1, fmt.Errorf("--stdin %s: %w", path, err)
	}
	return m, nil
}

// sealedCopy is a memfd that fill writes, then sealed against any change
// and read from its start: the program's stdin, which it can neither write
// through nor grow.
func sealedCopy(fill func(m int) error) (int, error) {
	m, err := unix.MemfdCreate("gojail-stdin", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return -1, fmt.Errorf("memfd_create: %w", err)
	}
	if err := fill(m); err != nil {
		unix.Close(m)
		return -1, fmt.Errorf("copy: %w", err)
	}
	if _, err := unix.FcntlInt(uintptr(m), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL); err != nil {
		unix.Close(m)
		return -1, fmt.Errorf("seal: %w", err)
	}
	if _, err := unix.Seek(m, 0, io.SeekStart); err != nil {
		unix.Close(m)
		return -1, err
	}
	return m, nil
}

// stdinFor opens a prepared jail's stdin: in.StdinData as a sealed copy,
// else in.Stdin as a one-shot run's (openStdin); -1 for none (the jail's
// /dev/null).
func stdinFor(ctx context.Context, in Input, wait time.Duration) (int, error) {
	switch {
	case in.StdinData != nil:
		return sealedCopy(func(m int) error {
			_, err := writeAll(m, in.StdinData)
			return err
		})
	case in.Stdin != "":
		return openStdin(ctx, in.Stdin, wait)
	}
	return -1, nil
}

// ownStdin passes this process's own stdin (--stdin -) on as a file
// would be: a regular file as a sealed copy of what is left of it, a pipe
// or a device (not a terminal) opened anew, so that the program shares no
// flags with the caller's (O_NONBLOCK, say, either way), a socket (what
// Node gives its children) as a sealed copy of what it brings until its
// end, which must come within wait; a directory is refused.
func ownStdin(ctx context.Context, wait time.Duration) (int, error) {
	var st unix.Stat_t
	if err := unix.Fstat(0, &st); err != nil {
		return -1, fmt.Errorf("--stdin -: gojail's own stdin: %w", err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		m, err := sealedCopy(func(m int) error { return copyFd(m, 0) })
		if err != nil {
			return -1, fmt.Errorf("--stdin -: %w", err)
		}
		return m, nil
	case unix.S_IFSOCK:
		deadline := time.Now().Add(wait)
		m, err := sealedCopy(func(m int) error {
			for {
				left := time.Until(deadline)
				if left <= 0 {
					return fmt.Errorf("gojail's own stdin, a socket, did not end within the wall-clock limit (%v)", wait)
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				pfd := []unix.PollFd{{Fd: 0, Events: unix.POLLIN}}
				if _, err := unix.Poll(pfd, int(min(left, 50*time.Millisecond)/time.Millisecond)+1); err != nil && err != unix.EINTR {
					return err
				}
				if pfd[0].Revents == 0 {
					continue
				}
				n, err := copyOnce(m, 0)
				if err == unix.EAGAIN { // a non-blocking socket's spurious wake-up
					continue
				}
				if err != nil || n == 0 {
					return err
				}
			}
		})
		if err != nil {
			return -1, fmt.Errorf("--stdin -: %w", err)
		}
		return m, nil
	case unix.S_IFDIR:
		return -1, errors.New("--stdin -: gojail's own stdin is a directory: give a file, a FIFO or a pipe")
	case unix.S_IFCHR:
		if _, err := unix.IoctlGetTermios(0, unix.TCGETS); err == nil {
			return -1, errors.New("--stdin -: gojail's own stdin is a terminal, which the program would share with its other users (its settings, its pending input): give a file, a FIFO or a pipe")
		}
	}
	fd, err := unix.Open("/proc/self/fd/0", unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == unix.EACCES || err == unix.EPERM {
		// Another user's pipe (gojail run under setpriv or sudo -u, fed by
		// its parent), which only its open descriptor reaches: that one,
		// its flags shared with the caller's.
		if fd, err = unix.FcntlInt(0, unix.F_DUPFD_CLOEXEC, 3); err != nil {
			return -1, fmt.Errorf("--stdin -: %w", err)
		}
		return fd, nil
	}
	if err == nil {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, 0)
	}
	if err != nil {
		return -1, fmt.Errorf("--stdin -: open gojail's own stdin anew: %w", err)
	}
	return fd, nil
}

// copyFd copies what src holds from its offset to m: sendfile, or reads
// and writes where the file system has no sendfile (/proc's, say).
func copyFd(m, src int) error {
	for {
		n, err := unix.Sendfile(m, src, nil, 1<<30)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EINVAL || err == unix.ENOSYS {
			break
		}
		if err != nil || n == 0 {
			return err
		}
	}
	for {
		n, err := copyOnce(m, src)
		if err != nil || n == 0 {
			return err
		}
	}
}

// copyOnce reads once from src and writes it all to m.
func copyOnce(m, src int) (int, error) {
	var buf [64 << 10]byte
	for {
		n, err := unix.Read(src, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return 0, err
		}
		_, err = writeAll(m, buf[:n])
		return n, err
	}
}

// openFIFO opens the FIFO at self (a /proc/self/fd link) for reading, and
// waits, for no longer than wait or ctx, until a writer has written to it
// or has come and gone (EOF): a reader opened without waiting sees no
// writer come, only its data or its close. The program gets the reader,
// blocking again.
func openFIFO(ctx context.Context, path, self string, wait time.Duration) (int, error) {
	fd, err := unix.Open(self, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("--stdin %s: %w", path, err)
	}
	deadline := time.Now().Add(wait)
	for {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		left := time.Until(deadline)
		if left <= 0 {
			unix.Close(fd)
			return -1, fmt.Errorf("--stdin %s: no writer wrote to the FIFO (or closed it) within the wall-clock limit (%v): start its writer before gojail, or give a file", path, wait)
		}
		if err := ctx.Err(); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("--stdin %s: stopped while waiting for the FIFO's writer: %w", path, err)
		}
		// ctx is looked at every 50 ms.
		n, err := unix.Poll(pfd, int(min(left, 50*time.Millisecond)/time.Millisecond)+1)
		if err != nil && err != unix.EINTR {
			unix.Close(fd)
			return -1, fmt.Errorf("--stdin %s: poll: %w", path, err)
		}
		if n > 0 {
			break
		}
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, 0); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("--stdin %s: %w", path, err)
	}
	return fd, nil
}

// keep records fd for closing and moves it to 3 or above.
func (s *supervisor) keep(fd int) int {
	fd = above2(fd)
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
	s.mu.Lock()
	if s.hardKill != nil { // it would signal a closed, perhaps reused, pidfd
		s.hardKill.Stop()
	}
	s.ctlClosed, s.closed = true, true
	s.mu.Unlock()
	// A caller about to exit (Input.Exiting) need not wait for the init's
	// exit, the teardown of the jail's namespaces, once the init has
	// reported every process of the jail reaped: the init exits at EOF on
	// the control pipe, which, with the seccomp listener (the last hold on
	// the filter, whose freeing is not quick either), is left to the
	// process's exit (see Exit), as are the rest of its descriptors and
	// the removal of the cgroup, which holds no process then.
	leave := s.pid > 0 && s.reported && s.in.Exiting
	if leave {
		startKeeper(s.plan.ctlW, s.listener)
		// Output that may take the caller a while to read: the init exits
		// now, so that its namespaces (its tmpfs files) are not kept while
		// the caller reads. (Unless told already: a stop request's byte.)
		if s.outBytes > bigOutput && !s.isKilled() {
			syscall.Write(s.plan.ctlW, []byte{'k'})
		}
	} else {
		for _, fd := range s.fds {
			if fd >= 0 {
				syscall.Close(fd)
			}
		}
		s.fds = nil
	}
	if s.cg != nil && !(leave && keeperRemoves(s.cg)) {
		if err := s.cg.Remove(); err != nil {
			s.log("%v", err)
		}
	}
	if leave {
		s.early.dropCgroup() // released: the init made them before, if ever
		return
	}
	if s.pid > 0 {
		s.reap() // its exit, the teardown of its namespaces, was under way meanwhile
	}
	s.early.dropCgroup()
	s.np.close()
	if s.pidfd > 0 {
		syscall.Close(int(s.pidfd))
	}
}

// bigOutput is more kept output than the caller's pipe surely takes at
// once: escaped in a JSON result, a byte may take six, and a pipe's
// default capacity is 64 KiB.
const bigOutput = 8 << 10

// readReports reads what a dead child left on the report pipe, without
// blocking.
func readReports(fd int) []byte {
	syscall.SetNonblock(fd, true)
	var b []byte
	buf := make([]byte, 512)
	for {
		n, err := syscall.Read(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if n <= 0 || err != nil || len(b) > 64<<10 {
			return b
		}
		b = append(b, buf[:n]...)
	}
}

// abort kills a child that was never released and reaps it.
func (s *supervisor) abort(syncW int) {
	s.closeFd(syncW) // EOF on the release pipe: the child exits by itself
	unix.PidfdSendSignal(int(s.pidfd), unix.SIGKILL, nil, 0)
	s.reap()
}

// closeCtl closes the control pipe: EOF tells the init to stop the jail,
// or, a prepared jail's having reported, to exit.
func (s *supervisor) closeCtl() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ctlClosed {
		s.ctlClosed = true
		s.closeFd(s.plan.ctlW)
	}
}

func (s *supervisor) reap() {
	var ws syscall.WaitStatus
	var ru syscall.Rusage
	s.waitInit(&ws, &ru)
}

// kill ends the whole jail, once, for the first reason given. The jail's
// init is asked first, so that it kills and reaps every process and their
// usage is counted; if it has not ended within a second, it is killed, which
// makes the kernel kill every process of its pid namespace.
// ended records why the jail would have been killed, once it has ended by
// itself: the verdict's reason, without the kill.
func (s *supervisor) ended(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.killed == "" {
		s.killed = reason
	}
}

func (s *supervisor) kill(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.killed != "" || s.closed {
		return
	}
	s.killed = reason
	s.log("stopping the jail: %s", reason)
	if !s.ctlClosed {
		syscall.Write(s.plan.ctlW, []byte{'k'})
	}
	s.hardKill = time.AfterFunc(time.Second, func() {
		s.mu.Lock() // closeAll, which closes the pidfd, stops this timer under it
		defer s.mu.Unlock()
		if s.closed {
			return
		}
		s.log("the jail's init did not stop within 1s: SIGKILL")
		unix.PidfdSendSignal(int(s.pidfd), unix.SIGKILL, nil, 0)
		if s.cg != nil {
			s.cg.Kill()
		}
	})
}
