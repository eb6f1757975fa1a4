package jail

import (
	"fmt"
	"slices"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/limits"
)

// Early is a jail's init cloned before its run is known: it makes its
// namespaces (the network one alone takes some 0.5 ms) while the caller
// reads its command line and policy. Run adopts it (Input.Early) when the
// policy wants what it made: new user, pid, mount, ipc, uts and network
// namespaces, for a one-shot run. Its first plan covers only that and its
// descriptors; the run's plan is written into the same memory before its
// release (complete), and the program's stdin, opened once known, comes
// with the cgroup's descriptors (joinFirst).
type Early struct {
	pid   int
	pidfd int32
	mono  time.Duration // CLOCK_MONOTONIC before the clone, for --debug's marks
	mem   *childMem
	cp    *childPlan // the init's first plan, in mem
	p     jailPipes  // after the clone the child's ends are closed here: their numbers are the init's
	done  bool       // adopted or discarded
	// atEntry: cloned by the process's entry, before the Go runtime
	// started (EntryInit), not by StartEarly; ignored, the signals the
	// process was started with ignored, which the init has ignored too.
	atEntry bool
	ignored uint64
	// cgName and cgDirs: the run's cgroup name and the directories the
	// init was asked to make (askCgroup), at cgAsked; cgDirs until a run
	// takes them (cgroupMade), else removed once the init is gone
	// (dropCgroup).
	cgName  string
	cgDirs  []string
	cgAsked time.Time
	// limits: the spec whose limits the init was asked to write into
	// those directories (askLimits), if any.
	limits *limits.Spec
}

// jailPipes are the descriptors between the supervisor and a jail's init,
// made before its clone, both ends at 3 or above (the child's dup3 onto
// 0-2 is then safe): the release, control, report, stdout and stderr
// pipes, and the socket that carries descriptors both ways (the cgroup's
// and stdin to the init, the filter's listener back).
type jailPipes struct {
	syncR, syncW, ctlR, ctlW, reportR, reportW, stdoutR, stdoutW, stderrR, stderrW, sockS, sockC int
}

func newJailPipes() (jailPipes, error) {
	p, what, e := makeJailPipes()
	if e != 0 {
		return p, fmt.Errorf("%s: %w", what, e)
	}
	return p, nil
}

// makeJailPipes makes the pipes with raw system calls and allocates
// nothing (entryStart calls it before the runtime starts); on failure it
// closes those it made and names the one that failed.
//
//go:norace
func makeJailPipes() (p jailPipes, what string, e syscall.Errno) {
	// In jailPipes's order: a read end and a write end each.
	names := [...]string{"pipe for release", "pipe for control", "pipe for report", "pipe for stdout", "pipe for stderr", "socketpair"}
	got := [12]int{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}
	for i := range names {
		var fds [2]int32
		if i < len(names)-1 {
			_, _, e = syscall.RawSyscall(syscall.SYS_PIPE2, uintptr(unsafe.Pointer(&fds)), syscall.O_CLOEXEC, 0)
		} else {
			_, _, e = syscall.RawSyscall6(syscall.SYS_SOCKETPAIR, unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0, uintptr(unsafe.Pointer(&fds)), 0, 0)
		}
		if e != 0 {
			closeFds(got[:])
			return jailPipes{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}, names[i], e
		}
		got[2*i], got[2*i+1] = above2(int(fds[0])), above2(int(fds[1]))
	}
	return jailPipes{got[0], got[1], got[2], got[3], got[4], got[5], got[6], got[7], got[8], got[9], got[10], got[11]}, "", 0
}

// closeAll closes both ends of every pipe made.
func (p *jailPipes) closeAll() {
	s, c := p.supervisorEnds(), p.childEnds()
	closeFds(s[:])
	closeFds(c[:])
}

// supervisorEnds and childEnds are the pipes' descriptors of each side
// (-1 for those not made).
func (p *jailPipes) supervisorEnds() [6]int {
	return [6]int{p.syncW, p.ctlW, p.reportR, p.stdoutR, p.stderrR, p.sockS}
}

func (p *jailPipes) childEnds() [6]int {
	return [6]int{p.syncR, p.ctlR, p.reportW, p.stdoutW, p.stderrW, p.sockC}
}

// earlyRoom is what an early init's memory keeps for the run's plan, which
// holds the submitted file; a larger plan is given a new init. The mapping
// is shared and not reserved: only the pages the plan fills are used.
const earlyRoom = 8 << 20

// planMargin covers what the plan gains between adopt and complete: the
// seccomp program (at most 4096 instructions) and the listener's message.
const planMargin = 64 << 10

// StartEarly clones an init for a run still to be read. Discard it if no
// Run adopts it.
func StartEarly() (*Early, error) {
	p, err := newJailPipes()
	if err != nil {
		return nil, err
	}
	e := &Early{p: p}
	c := new(childPlan)
	keep := e.firstPlan(c, limits.RootFd())
	c.keepFds = keep[:]
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	e.mono = time.Duration(ts.Nano())
	pid, cp, mem, err := forkChild(c, earlyRoom)
	if err != nil {
		p.closeAll()
		if errno, isErrno := err.(syscall.Errno); isErrno {
			return nil, fmt.Errorf("clone3: %w%s", errno, cloneHint(errno))
		}
		return nil, err
	}
	spread(pid, cp)
	e.pid, e.cp, e.mem = pid, cp, mem
	ends := p.childEnds()
	closeFds(ends[:]) // the init's now; the numbers stay, for its plan
	e.askCgroup()
	return e, nil
}

// firstPlan writes into c an early init's first plan: its namespaces and
// descriptors, and the pidfd's place, e.pidfd. It returns the descriptors
// the init keeps, sorted, for c.keepFds. It allocates nothing
// (entryStart). It keeps this process's CPU affinity for the init (spread).
//
//go:norace
func (e *Early) firstPlan(c *childPlan, cgRoot int) (keep [7]uintptr) {
	p := &e.p
	c.cloneArgs = cloneArgs{
		flags:      syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | unix.CLONE_PIDFD,
		exitSignal: uint64(syscall.SIGCHLD),
		pidfd:      uint64(uintptr(unsafe.Pointer(&e.pidfd))),
	}
	c.unshareFlags = earlyNamespaces
	if n, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(c.cpus), uintptr(unsafe.Pointer(&c.cpus[0]))); e == 0 {
		c.cpusLen = n // spread
	}
	c.syncR, c.reportW, c.ctlR = p.syncR, p.reportW, p.ctlR
	c.stdio = [3]int{-1, p.stdoutW, p.stderrW}
	c.notifySock = p.sockC
	for i, fd := range p.childEnds() {
		keep[i] = uintptr(fd)
	}
	keep[6] = keep[0] // a second time: nothing more to keep
	if cgRoot >= 0 {
		c.cgRoot, keep[6] = cgRoot+1, uintptr(cgRoot)
	}
	slices.Sort(keep[:])
	return keep
}

// askCgroup asks the init to make the run's cgroup directories
// (limits.EarlyDirs) while it waits for its release: on this 2-CPU
// machine it has made its namespaces some 0.6 ms before the supervisor
// has started and read the run, and idles, where the supervisor would
// make them after the release (v1), while pid 2 waits for them, or
// before it (v2), on the way to the release. Nothing is asked
// when the paths do not fit the plan or the init has no /sys/fs/cgroup.
func (e *Early) askCgroup() {
	c := e.cp
	if c.cgRoot == 0 {
		return
	}
	name, rel, abs := limits.EarlyDirs()
	if len(rel) == 0 || len(rel) > len(c.cgPath) {
		return
	}
	for _, p := range rel {
		if len(p) >= cgPathMax {
			return
		}
	}
	for i, p := range rel {
		copy(c.cgPath[i][:], p)
		c.cgPath[i][len(p)] = 0
	}
	c.cgCount = len(rel)
	e.cgName, e.cgDirs, e.cgAsked = name, abs, time.Now()
	if n, err := syscall.Write(e.p.syncW, []byte{'c'}); n != 1 || err != nil {
		c.cgCount = 0
		e.cgName, e.cgDirs = "", nil
	}
}

// askLimits asks the init, once it has made the directories (askCgroup),
// to write spec's limits into them and to open their tasks files, with an
// 'l' on the release pipe: it idles until its release, while this process
// still reads the run, where the limits would be written after the
// release (v1), while pid 2 waits for them. Nothing is asked when no
// directories were, or when the writes do not all go into them or do not
// fit the plan (limits.EarlyWrites).
func (e *Early) askLimits(spec limits.Spec) {
	if e == nil || e.done || e.cgName == "" || e.limits != nil {
		return
	}
	c := e.cp
	if !c.setWrites(limits.EarlyWrites(spec)) {
		return
	}
	if n, err := syscall.Write(e.p.syncW, []byte{'l'}); n != 1 || err != nil {
		c.cgWriteN = 0
		return
	}
	e.limits = &spec
}

// setWrites puts ews into the first plan c for the init (cgroupWrites),
// and reports whether they fit: none do unless all do.
func (c *childPlan) setWrites(ews []limits.EarlyWrite) bool {
	if len(ews) == 0 || len(ews) > len(c.cgWrites) {
		return false
	}
	for _, w := range ews {
		if w.Dir >= c.cgCount || len(w.File) >= cgFileMax || len(w.Value) > len(c.cgWrites[0].value) {
			return false
		}
	}
	for i, w := range ews {
		cw := &c.cgWrites[i]
		cw.dir, cw.missing, cw.valueN = int32(w.Dir), w.Missing, int32(len(w.Value))
		cw.file = [cgFileMax]byte{}
		copy(cw.file[:], w.File)
		copy(cw.value[:], w.Value)
	}
	c.cgWriteN = len(ews)
	return true
}

// cgroupMade waits for the init to have made the directories askCgroup
// asked for, and returns the run's name and those it made, which the run
// takes (limits.Spec.Made: New removes those it does not use). None when
// it was asked for none, when it has not made them within a second (it is
// stuck: the run makes its own, and they are removed once the init is
// gone), or when they were asked for more than cgFresh ago: a gojail in
// another pid namespace takes an empty run directory so old, with a name
// it cannot judge, for one left behind (limits.foreignAge). In the last
// two cases why says, for --debug, why none are taken.
//
// When the init was asked to write spec's limits too (askLimits) and has
// made every directory, wrote has the results (limits.Spec.Wrote); with
// tasks, its descriptors of the tasks files are there for pid 2
// (joinTasks).
func (e *Early) cgroupMade(spec limits.Spec) (name string, made []string, wrote []error, tasks bool, why string) {
	if e == nil || e.cgName == "" {
		return "", nil, nil, false, ""
	}
	if time.Since(e.cgAsked) > cgFresh {
		return "", nil, nil, false, fmt.Sprintf("asked for more than %v ago", cgFresh)
	}
	c := e.cp
	done := func() bool {
		return atomic.LoadUint32(&c.cgDone) != 0 && (e.limits == nil || atomic.LoadUint32(&c.cgWrote) != 0)
	}
	for deadline := time.Now().Add(time.Second); !done(); {
		if time.Now().After(deadline) {
			return "", nil, nil, false, "not made within a second"
		}
		flag := &c.cgDone
		if atomic.LoadUint32(flag) != 0 {
			flag = &c.cgWrote
		}
		ts := unix.Timespec{Nsec: int64(time.Millisecond)}
		syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(flag)), futexWait, 0, uintptr(unsafe.Pointer(&ts)), 0, 0)
	}
	for i, dir := range e.cgDirs {
		if atomic.LoadInt32(&c.cgErr[i]) == 0 {
			made = append(made, dir)
		}
	}
	if l := e.limits; l != nil && l.Memory == spec.Memory && l.Pids == spec.Pids && l.CPUs == spec.CPUs && l.TCP == spec.TCP && len(made) == len(e.cgDirs) {
		wrote = make([]error, c.cgWriteN)
		for i := range wrote {
			if errno := syscall.Errno(c.cgWriteErr[i]); errno != 0 {
				wrote[i] = errno
			}
		}
		tasks = c.taskN == len(e.cgDirs)
		for i := 0; i < c.taskN; i++ {
			tasks = tasks && c.cgTasks[i] >= 0
		}
	}
	name, e.cgName, e.cgDirs = e.cgName, "", nil // the run's now
	return name, made, wrote, tasks, ""
}

// cgFresh is how long after askCgroup a run takes the directories the
// init made: well within limits.foreignAge.
const cgFresh = 20 * time.Second

// dropCgroup removes the directories the init was asked to make and no
// run took, once the init is gone (or, released, done with them); an
// init that is never released removes them itself at EOF, unless it is
// killed first. Safe on nil.
func (e *Early) dropCgroup() {
	if e == nil {
		return
	}
	for _, dir := range e.cgDirs {
		limits.RemoveDir(dir)
	}
	e.cgName, e.cgDirs = "", nil
}

// earlyNamespaces are those an early init makes, besides its user and pid
// namespaces: a policy with the host's network cannot adopt it.
const earlyNamespaces = syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWNET

// fits reports whether c, the run's plan before its filter, fits the
// room left in the init's memory.
func (e *Early) fits(c *childPlan) bool {
	sizing := childMem{off: e.mem.off}
	c.into(&sizing)
	return sizing.off+planMargin <= len(e.mem.mem)
}

// complete writes the run's plan into the init's memory, where it follows
// it once released, and returns that copy for settle.
func (e *Early) complete(c *childPlan) *childPlan {
	cp := e.mem.plan(c)
	e.cp.next = cp
	return cp
}

// Discard ends an init no run adopted: EOF on its release pipe, and it
// exits by itself; it is reaped here. Safe on nil, and after adoption.
func (e *Early) Discard() {
	if e == nil || e.done {
		return
	}
	e.done = true
	ends := e.p.supervisorEnds()
	closeFds(ends[:]) // EOF on the release pipe first
	if e.pidfd > 0 {
		pfd := []unix.PollFd{{Fd: e.pidfd, Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(pfd, -1); err != unix.EINTR {
				break
			}
		}
	}
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(e.pid, &ws, 0, nil); err != syscall.EINTR {
			break
		}
	}
	if e.pidfd > 0 {
		syscall.Close(int(e.pidfd))
	}
	e.mem.free()
	e.dropCgroup()
}

// above2 moves fd to 3 or above, so that the child's dup3 onto 0-2 is
// safe. Raw system calls only (makeJailPipes).
func above2(fd int) int {
	if fd < 3 {
		if nfd, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 3); e == 0 {
			syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
			return int(nfd)
		}
	}
	return fd
}

// adopt takes the run's early init when it made the namespaces the policy
// wants and has room for the run's plan; otherwise it is discarded, and
// the run clones its own.
//
// The plan's ignored signals are this process's (ignoredSignals), but for
// an init cloned at the entry, which has the caller's own: the plan is
// made without them (prepare), and they are filled in here.
func (s *supervisor) adopt() *Early {
	e := s.in.Early
	if e == nil || e.done || s.prepared || s.plan.unshareFlags != earlyNamespaces || !e.fits(s.plan) {
		if e != nil && !e.done {
			s.log("the init started early does not fit this run: a new one")
			e.Discard()
		}
		if s.ignoredLater {
			s.plan.ignored = ignoredSignals()
		}
		return nil
	}
	// The run's from here, whatever happens next: its descriptors are
	// closed, and it is reaped, with the run's (closeAll).
	e.done = true
	if s.ignoredLater {
		s.plan.ignored = signalList(e.ignored)
	}
	s.pid, s.pidfd, s.monoFork = e.pid, e.pidfd, e.mono
	ends := e.p.supervisorEnds()
	s.fds = append(s.fds, ends[:]...)
	return e
}
