package jail

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/jail/seccomp"
	"github.com/gojail/gojail/limits"
	"github.com/gojail/gojail/policy"
)

// lateStart is how long a run lasts before its watcher of the caller's
// context and its Started hook start.
const lateStart = 20 * time.Millisecond

// chunks are the buffers the output is read into, one per run at a time,
// kept for the next runs (at most chunksKept). Each is mapped outside the
// Go heap: a run pays for the pages its output fills, where a 64 KiB heap
// object is a large span set up (and its pages touched) on every first use.
var chunks struct {
	sync.Mutex
	free [][]byte
}

const chunkSize, chunksKept = 64 << 10, 16

func getChunk() []byte {
	chunks.Lock()
	if n := len(chunks.free); n > 0 {
		b := chunks.free[n-1]
		chunks.free = chunks.free[:n-1]
		chunks.Unlock()
		return b
	}
	chunks.Unlock()
	b, err := unix.Mmap(-1, 0, chunkSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return make([]byte, chunkSize)
	}
	return b
}

func putChunk(b []byte) {
	chunks.Lock()
	if len(chunks.free) < chunksKept {
		chunks.free = append(chunks.free, b)
		b = nil
	}
	chunks.Unlock()
	if b != nil {
		unix.Munmap(b) // fails harmlessly for a heap fallback, which the GC frees
	}
}

// watch waits for the jail to end, enforcing the wall-clock and output
// limits, then collects its output, reports and figures into a verdict.
// It is one loop on one thread: ppoll on the output pipes and the report
// pipe, with the wall-clock deadline as its timeout. The report pipe reaches
// EOF when the jail's init exits, the output pipes when the last process of
// the jail does; init kills and reaps the whole tree before it exits.
func (s *supervisor) watch(ctx context.Context, fds jailFds) *Result {
	s.armPoll(fds)
	l := &s.p.Limits
	// What a short run need not start, since each goroutine here would wake
	// a thread while the jail's setup has the other core: the watcher of
	// ctx and the caller's Started hook come once the run has lasted
	// lateStart, or has been stopped (its teardown may take a second).
	// Before that, ctx is looked at on every pass of the loop, so a cancel
	// comes through at once if it came first, else within lateStart.
	done := make(chan struct{})
	defer close(done)
	lateAt, lateDone := s.started.Add(lateStart), false
	late := func() {
		lateDone = true
		if s.in.Started != nil {
			s.in.Started()
		}
		if ctx.Done() != nil {
			go func() {
				select {
				case <-ctx.Done():
					s.kill(killContext)
				case <-done:
				}
			}()
		}
	}

	streams := [3]stream{
		{fd: fds.stdoutR, limit: int64(l.Output)},
		{fd: fds.stderrR, limit: int64(l.Output)},
		{fd: fds.reportR, limit: 1 << 16}, // a few 48-byte records
	}
	// Besides the streams: the socket that brings the filter's listener,
	// then the listener itself.
	const sockIdx, listenIdx = 3, 4
	notify := s.notifyFds(fds)
	var pfd [5]unix.PollFd
	chunk := getChunk()
	defer putChunk(chunk)
	deadline := s.started.Add(l.WallTime.Std())
	cpuCheck := s.nextCPUCheck(0, cpuBound())
	var ws syscall.WaitStatus
	var ru syscall.Rusage
	for open := 3; open > 0; {
		// The jail has ended once its init has reported, which it does
		// with every process of the jail reaped, or has exited without a
		// report, after the kernel has killed and waited for the rest of
		// its pid namespace. The program's output is in the pipes then, but
		// their write ends may still be held: by descriptors in flight in
		// unix sockets that no process can receive any more (the kernel
		// frees such a loop when its garbage collector next runs, which
		// some other process's passing of descriptors starts), or, on the
		// host's network, by a process outside the jail. So the pipes are
		// read for what they hold then (drain), not to their EOF. The
		// init's own exit (the namespaces' teardown) need not be waited for
		// when it has reported.
		if reported := hasFinalReport(streams[2].buf); reported || streams[2].fd < 0 {
			if !reported {
				s.waitInit(&ws, &ru) // its files close before its namespace is emptied
			}
			for i := range streams[:2] {
				if s.drain(&streams[i], chunk) && l.OutputAction == policy.OutputKill {
					s.ended(killOutput) // past the limit: the jail has ended already
				}
			}
			break
		}
		for i := range streams {
			pfd[i] = unix.PollFd{Fd: int32(streams[i].fd), Events: unix.POLLIN}
		}
		pfd[sockIdx] = unix.PollFd{Fd: int32(notify[0]), Events: unix.POLLIN}
		pfd[listenIdx] = unix.PollFd{Fd: int32(notify[1]), Events: unix.POLLIN}
		var ts *unix.Timespec
		if !lateDone && ctx.Err() != nil {
			s.kill(killContext)
		}
		if !lateDone && s.isKilled() {
			late()
		}
		if !s.isKilled() {
			now := time.Now()
			if !now.Before(deadline) {
				s.kill(killWall)
				continue
			}
			if !lateDone && !now.Before(lateAt) {
				late()
			}
			wake := deadline
			if !lateDone && lateAt.Before(wake) {
				wake = lateAt
			}
			if s.cg != nil && !now.Before(cpuCheck) {
				used, err := s.cg.CPU()
				used -= s.cpuBase
				if err == nil && used >= l.CPUTime.Std() {
					s.kill(killCPU)
					continue
				}
				cpuCheck = s.nextCPUCheck(used, jailCPUs())
			}
			if s.cg != nil && cpuCheck.Before(wake) {
				wake = cpuCheck
			}
			t := unix.NsecToTimespec(wake.Sub(now).Nanoseconds())
			ts = &t
		}
		if err := s.np.poll(pfd[:], ts); err != nil && err != unix.EINTR {
			s.log("ppoll: %v", err)
			s.pollErr = err
			s.kill(killPoll)
			break
		}
		if pfd[sockIdx].Revents != 0 {
			s.takeListener(notify[0])
			notify = s.notifyFds(fds)
		}
		if pfd[listenIdx].Revents&unix.POLLIN != 0 {
			s.notification(notify[1])
		} else if pfd[listenIdx].Revents != 0 { // no process left under the filter
			notify[1] = -1
		}
		for i := range streams {
			st := &streams[i]
			if st.fd < 0 || pfd[i].Revents == 0 {
				continue
			}
			n, err := rawRead(st.fd, chunk)
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
	wall := time.Since(s.started)
	reps := decodeReports(streams[2].buf)
	final := finalReport(reps)
	if final == nil {
		// Its end is the verdict. Otherwise the init, outside the jail's
		// cgroup, is waited for after the result, its cgroup removed
		// meanwhile (closeAll; a prepared jail's, Prepared.Run), or not
		// at all when the caller exits then (Input.Exiting). A live init
		// (the poll failed) is told to stop: it waits for that. (The
		// keeper may hold the control pipe too, but then the stop
		// request's byte, kill's, has told it already.)
		s.closeCtl()
		s.waitInit(&ws, &ru)
	}
	cpu, peak := time.Duration(ru.Utime.Nano()+ru.Stime.Nano()), ru.Maxrss*1024
	if final != nil {
		s.reported = true
		cpu = time.Duration(final.UtimeUs+final.StimeUs) * time.Microsecond
		peak = int64(final.MaxrssKB) * 1024
	}
	s.mu.Lock()
	if s.hardKill != nil {
		s.hardKill.Stop()
	}
	killed := s.killed
	s.mu.Unlock()

	out, errOut := &streams[0], &streams[1]
	s.stderrTail = string(errOut.tail)
	s.outBytes = len(out.buf) + len(errOut.buf)
	r := &Result{
		Stdout: out.kept(), Stderr: errOut.kept(),
		StdoutTruncated: out.truncated, StderrTruncated: errOut.truncated,
		StdoutBytes: out.total, StderrBytes: errOut.total,
		WallMs:          ms(wall),
		CPUMs:           ms(cpu),
		MemoryPeakBytes: peak,
		Enforced:        s.enforced,
		ExitCode:        -1,
	}
	var usage limits.Usage
	if s.cg != nil {
		// A program that exited 0 is ok whatever its memory did: the OOM
		// and limit counters are read only for another end.
		ok := final != nil && final.Kind == reportExit && syscall.WaitStatus(final.Status).Exited() && syscall.WaitStatus(final.Status).ExitStatus() == 0
		var err error
		if usage, err = s.cg.Usage(!ok); err != nil {
			s.log("read the cgroup's figures: %v", err)
		}
		r.CPUMs = ms(usage.CPU - s.cpuBase)
		if usage.MemoryPeak > 0 {
			r.MemoryPeakBytes = usage.MemoryPeak
		}
	}
	r.SeccompLog = s.events
	for _, rep := range reps {
		if rep.Kind == reportMark {
			s.markLine(rep)
		}
	}
	s.verdict(r, ws, reps, killed, usage)
	s.log("verdict: %s (exit code %d, signal %q), wall %.1f ms, cpu %.1f ms", r.Status, r.ExitCode, r.Signal, r.WallMs, r.CPUMs)
	return r
}

// armPoll readies what watch waits on: the output pipes made non-blocking
// (a jail whose processes run as the caller, rootless, can open its own
// stdout for reading, /proc/self/fd/1, and take the bytes between a poll
// and the read, which would then wait, and with it the wall clock), and
// the poll set made. Prepare arms a prepared jail's while it waits for its
// program, taking the filter's listener too if pid 2 has sent it (an
// early filter): having sent the program, the supervisor then waits at
// once, where its 20-odd calls had held pid 2 off a shared CPU for some
// 0.1 ms.
func (s *supervisor) armPoll(fds jailFds) {
	if s.armed {
		return
	}
	s.armed = true
	unix.SetNonblock(fds.stdoutR, true)
	unix.SetNonblock(fds.stderrR, true)
	if s.prepared {
		sock := []unix.PollFd{{Fd: int32(fds.notifyR), Events: unix.POLLIN}}
		if n, err := unix.Poll(sock, 0); err == nil && n == 1 {
			s.takeListener(fds.notifyR)
		}
	}
	notify := s.notifyFds(fds)
	pfd := [5]unix.PollFd{
		{Fd: int32(fds.stdoutR), Events: unix.POLLIN},
		{Fd: int32(fds.stderrR), Events: unix.POLLIN},
		{Fd: int32(fds.reportR), Events: unix.POLLIN},
		{Fd: int32(notify[0]), Events: unix.POLLIN},
		{Fd: int32(notify[1]), Events: unix.POLLIN},
	}
	s.np.watch(pfd[:]) // a failure is watch's poll's to report
	// The files the cgroup's figures are read from, opened now, once the
	// poll set has its descriptor (a caller short of descriptors gets the
	// poll's error, not a run that cannot be waited for): after the
	// release, while the init clones pid 2, off the way to the program.
	if s.cg != nil {
		s.cg.KeepCounters()
	}
}

// notifyFds are the listener's socket, until it has brought its message,
// and the listener, once it has; -1 for neither.
func (s *supervisor) notifyFds(fds jailFds) [2]int {
	if s.sockDone {
		return [2]int{-1, s.listener}
	}
	return [2]int{fds.notifyR, -1}
}

// takeListener takes the one message of the listener's socket: the
// filter's listener, or none.
func (s *supervisor) takeListener(sock int) {
	s.sockDone = true
	fd := receiveListener(sock)
	if fd < 0 {
		return
	}
	// Closed with the run's other descriptors: the last reference frees
	// the filter, which is not quick.
	s.fds = append(s.fds, fd)
	s.listener = fd
	if s.in.Exiting {
		startKeeper(s.plan.ctlW, s.listener)
	}
	// The program is under way: what runs killed earlier left is looked
	// for now, while this goroutine waits, not after the program's end.
	if s.cg != nil {
		s.cg.Sweep()
	}
}

// nextCPUCheck says when the tree can first have used its CPU-time limit,
// having used used: cpus CPUs busy for what is left, every one it can run
// on (jailCPUs), or, for the first check, at least as many (cpuBound). The
// supervisor reads the cgroup's figure then, and not before.
func (s *supervisor) nextCPUCheck(used time.Duration, cpus int) time.Time {
	left := (s.p.Limits.CPUTime.Std() - used) / time.Duration(cpus)
	return time.Now().Add(max(left, time.Millisecond))
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
	var what string
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n))); e != 0 {
		// The caller died meanwhile: its process ended (another of its
		// threads exited, say) before the call could be read. Outside log
		// mode every notification is of a call the filter kills.
		if e != unix.ENOENT || s.spec.LogMode {
			return
		}
		what = "a system call the seccomp policy kills: its process ended before the call could be read"
	}
	switch {
	case what != "":
	case n.arch == auditArchI386:
		what = fmt.Sprintf("i386 system call %d (int 0x80): foreign system-call ABIs are killed", n.nr)
	case n.arch == auditArchX8664 && n.nr&x32SyscallBit != 0:
		nr := int(n.nr &^ x32SyscallBit)
		name := seccomp.Name(nr) // x32's own calls, from 512, have no x86-64 name
		if nr >= 512 {
			name = strconv.Itoa(nr)
		}
		what = fmt.Sprintf("x32 system call %s: foreign system-call ABIs are killed", name)
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
// an errno; a trap, SIGSYS sent to the calling thread and the call refused
// with ENOSYS (the differences from the filter's own trap are below); a log
// rule, letting the call run. It returns false for a kill, which the caller
// carries out.
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
	case policy.ActTrap:
		resp.error = -int32(unix.ENOSYS)
		// SIGSYS is sent while the thread still waits for this answer, so
		// that it is pending when the call returns and comes before any
		// more of the program's code (sent after it, the signal could miss
		// a thread that went on and exited); the wait is one only a fatal
		// signal ends (filterFlags), so the call returns ENOSYS, and a
		// handler of SIGSYS runs once. The thread's pidfd is taken while it
		// waits (the notification still valid), so that the signal cannot
		// reach another process that reused its id. Without a thread pidfd
		// (before Linux 6.9) the call is refused without the signal. Unlike
		// the filter's own trap, the signal is not forced: a program that
		// ignores or blocks SIGSYS sees only ENOSYS.
		if pidfd, err := unix.PidfdOpen(int(n.pid), pidfdThread); err == nil {
			_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&n.id)))
			if e == 0 {
				unix.PidfdSendSignal(pidfd, unix.SIGSYS, nil, 0)
			}
			unix.Close(pidfd)
			if e != 0 {
				return true // the caller died meanwhile
			}
		}
	default: // allow (by a rule), log: the call runs
		resp.flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
	}
	unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
	return true
}

// pidfdThread is PIDFD_THREAD (Linux 6.9): a pidfd of one thread, to which
// pidfd_send_signal sends a thread-directed signal.
const pidfdThread = unix.O_EXCL

// record counts one refusal of log mode.
func (s *supervisor) record(e SeccompEvent) {
	key := [2]string{e.Syscall, e.Action}
	i, ok := s.eventAt[key]
	if !ok && len(s.events) >= maxEvents-1 {
		key = [2]string{"other system calls"}
		i, ok = s.eventAt[key]
		e = SeccompEvent{Syscall: key[0], Action: "as the policy says", Rule: fmt.Sprintf("past %d entries", maxEvents-1)}
	}
	if ok {
		s.events[i].Count++
		return
	}
	if s.eventAt == nil {
		s.eventAt = map[[2]string]int{}
	}
	s.eventAt[key] = len(s.events)
	e.Count = 1
	s.events = append(s.events, e)
}

// markWords say what the child had done at each of its marks (--debug).
var markWords = map[Step]string{
	stepUnshare:   "namespaces made (mount, ipc, uts, network)",
	stepHostTree:  "the host's tree detached before the release",
	stepRelease:   "released: its id maps written",
	stepMoveMount: "root built (binds, /proc, /dev, tmpfs, files)",
	stepCloseFds:  "in its root: host name set, pid 2 let in",
	stepSeccomp:   "pid 2: capabilities dropped, limits and filter in place, execve next",
	stepReaped:    "the program ended, every process of the jail reaped",
}

// drain reads what st's pipe holds, once the jail has ended: no more than
// FIONREAD counts at the start, so that a writer outside the jail cannot
// keep it reading. It reports whether the stream went past its limit.
func (s *supervisor) drain(st *stream, chunk []byte) (over bool) {
	if st.fd < 0 {
		return false
	}
	left, err := unix.IoctlGetInt(st.fd, unix.TIOCINQ) // FIONREAD
	for err == nil && left > 0 {
		n, rerr := rawRead(st.fd, chunk[:min(len(chunk), left)])
		if rerr == syscall.EINTR {
			continue
		}
		if n <= 0 {
			break
		}
		left -= n
		over = st.add(chunk[:n]) || over
	}
	st.fd = -1
	return over
}

// hasFinalReport is finalReport(decodeReports(b)) != nil without the
// allocation, for every pass of the wait: the collector is off for a run,
// and a flood of output makes many passes.
func hasFinalReport(b []byte) bool {
	size := int(unsafe.Sizeof(report{}))
	for ; len(b) >= size; b = b[size:] {
		if isFinal((*report)(unsafe.Pointer(&b[0])).Kind) {
			return true
		}
	}
	return false
}

// finalReport returns the init's last word on the program: its exit, or
// its kill on request; nil if there is none yet.
func finalReport(reps []report) *report {
	for i := range reps {
		if isFinal(reps[i].Kind) {
			return &reps[i]
		}
	}
	return nil
}

// isFinal tells the init's last word on the program from its other reports.
func isFinal(kind uint32) bool { return kind == reportExit || kind == reportKilled }

// waitInit reaps the jail's init, once.
func (s *supervisor) waitInit(ws *syscall.WaitStatus, ru *syscall.Rusage) {
	if s.reaped {
		return
	}
	if s.pidfd > 0 {
		// Until it has exited, without a thread blocked in wait4 (netPoll).
		pfd := [1]unix.PollFd{{Fd: s.pidfd, Events: unix.POLLIN}}
		for pfd[0].Revents == 0 && s.np.poll(pfd[:], nil) == nil {
		}
	}
	for {
		if _, err := syscall.Wait4(s.pid, ws, 0, ru); err != syscall.EINTR {
			break
		}
	}
	s.reaped = true
}

func (s *supervisor) isKilled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.killed != ""
}
