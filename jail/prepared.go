package jail

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/policy"
	"github.com/gojail/gojail/validate"
)

// Prepared is a jail made ahead of its program, for many runs in a row (a
// grader, a server): its namespaces, root, cgroup, limits and filter are in
// place, and its init waits for the program. A prepared jail serves one
// run, so every run still gets fresh namespaces that no earlier run
// touched; preparing the next while one runs hides the setup's cost.
type Prepared struct {
	s     *supervisor
	fds   jailFds
	ready time.Time
	done  chan struct{} // closed once the jail is torn down
	taken atomic.Bool   // Run or Close has the jail: the other does nothing
}

// Prepare makes a jail for policy p, which the caller has validated (as
// for Run; Prepare refuses a policy that fails validate.Structure), and
// waits until its setup is done, or ctx is done. log, when set, is told
// every step.
func Prepare(ctx context.Context, p *policy.Policy, log func(format string, args ...any)) (*Prepared, error) {
	if err := validate.Structure(p); err != nil {
		return nil, err
	}
	s := &supervisor{p: p, log: log, enforced: map[string]string{}, prepared: true, debug: log != nil, listener: -1}
	if s.log == nil {
		s.log = func(string, ...any) {}
	}
	fds, err := s.start(ctx)
	if err != nil {
		s.closeAll()
		return nil, err
	}
	// The init says it is ready, or why its setup failed, after the marks
	// of its steps under --debug.
	var rep report
	buf := make([]byte, unsafe.Sizeof(rep))
	deadline := time.Now().Add(setupLimit)
	for {
		rep = report{}
		if err := readableBy(ctx, fds.reportR, deadline); err != nil {
			s.abort(s.goW)
			s.closeAll()
			return nil, err
		}
		if n, _ := readFullFd(fds.reportR, buf); n == len(buf) {
			rep = *(*report)(unsafe.Pointer(&buf[0]))
		}
		if rep.Kind != reportMark {
			break
		}
		s.markLine(rep)
	}
	if rep.Kind != reportReady {
		err := errors.New("the jail's init ended during its setup")
		if rep.Kind == reportError {
			err = fmt.Errorf("jail setup failed: %w", s.childError(rep))
		}
		s.abort(s.goW)
		s.closeAll()
		return nil, err
	}
	if s.cg != nil {
		// The setup's own CPU time is not the program's. Read now, not at
		// the request: nothing of the jail runs until then (pid 2 waits in
		// read, the init for pid 2's execve).
		s.cpuBase, _ = s.cg.CPU()
	}
	s.armPoll(fds)
	return &Prepared{s: s, fds: fds, ready: time.Now(), done: make(chan struct{})}, nil
}

// setupLimit bounds the making of a prepared jail, which takes a few
// milliseconds: one that never says it is ready is given up, not waited for.
const setupLimit = 10 * time.Second

// readableBy waits until fd can be read (data or EOF); it fails when the
// deadline passes or ctx is done first.
func readableBy(ctx context.Context, fd int, deadline time.Time) error {
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("the jail's setup was cancelled: %w", err)
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return fmt.Errorf("the jail's setup did not finish within %s", setupLimit)
		}
		// ctx is looked at every 50 ms: a setup takes a few.
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		ts := unix.NsecToTimespec(min(wait, 50*time.Millisecond).Nanoseconds())
		n, err := unix.Ppoll(pfd, &ts, nil)
		if err == unix.EINTR || (err == nil && n == 0) {
			continue
		}
		if err != nil {
			return fmt.Errorf("wait for the jail's setup: %w", err)
		}
		return nil
	}
}

// Run runs in in the prepared jail and reports what happened. The policy
// is the one the jail was prepared with; in.Stdin is read here, in.Log is
// not used.
//
// The result comes as soon as the program's tree has ended; the jail's
// teardown (its init's exit, the namespaces, the cgroup) goes on in the
// background: Wait waits for it.
func (pj *Prepared) Run(ctx context.Context, in Input) *Result {
	if !pj.taken.CompareAndSwap(false, true) {
		return Failed(StatusInternalError, errors.New("this prepared jail has already run or been closed: a prepared jail serves one run"))
	}
	s := pj.s
	s.in = in
	s.in.Exiting = false // a prepared jail's caller serves more runs (see Input.Exiting)
	if err := checkArgs(&in); err != nil {
		pj.giveUp()
		return Failed(StatusInvalidInput, err)
	}
	if in.WallTime != 0 || in.Output != 0 {
		l := s.p.Limits
		switch {
		case in.WallTime < 0 || in.WallTime > l.WallTime:
			pj.giveUp()
			return Failed(StatusInvalidInput, fmt.Errorf("a run's wall-clock limit of %s: at most the policy's, %s", in.WallTime, l.WallTime))
		case in.Output < 0 || in.Output > l.Output:
			pj.giveUp()
			return Failed(StatusInvalidInput, fmt.Errorf("a run's output limit of %s: at most the policy's, %s", in.Output, l.Output))
		}
		p := *s.p // this jail's own: the policy is every jail's
		p.Limits.WallTime = cmp.Or(in.WallTime, l.WallTime)
		p.Limits.Output = cmp.Or(in.Output, l.Output)
		s.p = &p
	}
	// The program's stdin is what a one-shot run's would be: /dev/null,
	// which the jail was prepared with, or one sent to pid 2 now.
	fd, err := stdinFor(ctx, in, s.p.Limits.WallTime.Std())
	if err != nil {
		pj.giveUp()
		if in.StdinData != nil { // its copy failed: gojail's own fault
			return Failed(StatusInternalError, fmt.Errorf("the program's stdin: %w", err))
		}
		return Failed(StatusInvalidInput, err)
	}
	cmd, err := pj.command(in, fd >= 0)
	if err != nil {
		if fd >= 0 {
			syscall.Close(fd)
		}
		pj.giveUp()
		return Failed(StatusInvalidInput, err)
	}
	if fd >= 0 {
		err = sendFds(pj.fds.notifyR, []int{fd})
		syscall.Close(fd)
		if err != nil {
			pj.giveUp()
			return Failed(StatusInternalError, fmt.Errorf("send the program's stdin to the jail: %w", err))
		}
	}
	s.started = time.Now()
	if w := s.takeFd(s.goW); len(cmd) <= syscall.Getpagesize() {
		// Fits in any pipe (a page at the least): written at once, with
		// no writer to schedule.
		writeAll(w, cmd)
		syscall.Close(w)
	} else {
		go func() { // the file may be larger than the pipe
			writeAll(w, cmd)
			syscall.Close(w)
		}()
	}
	r := s.watch(ctx, pj.fds)
	go func() {
		s.closeCtl() // the init exits now (it waits for this once it has reported)
		s.reap()
		s.closeAll()
		close(pj.done)
	}()
	return r
}

// Wait waits until the jail is torn down: after Run, its teardown (about a
// millisecond after the result); after Close, or a Run that failed before
// its program started, at once. Neither Run nor Close: it waits for ever.
func (pj *Prepared) Wait() { <-pj.done }

// Close gives up a prepared jail that will not run: its init reads EOF
// instead of a program and exits. After Run it does nothing (Run's
// teardown has the jail), so that a deferred Close is safe.
func (pj *Prepared) Close() {
	if pj.taken.CompareAndSwap(false, true) {
		pj.giveUp()
	}
}

// Alive reports whether the jail can still run its program: its init and
// pid 2 are waiting for it. Between the jail's readiness and its run nothing
// of the jail writes its reports, so a report pipe that can be read (its
// EOF) means they have ended: killed from the host, say, where an idle
// jail's init is the OOM killer's first choice.
func (pj *Prepared) Alive() bool {
	if pj.taken.Load() {
		return false
	}
	pfd := []unix.PollFd{{Fd: int32(pj.fds.reportR), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(pfd, 0)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n == 0
	}
}

// giveUp tears down a jail whose program never started.
func (pj *Prepared) giveUp() {
	pj.s.abort(pj.s.goW)
	pj.s.closeAll()
	close(pj.done)
}

// command encodes the program for readCommand: the file's length and
// bytes (all ones: no file), then the length of the rest, argv and the
// environment; argc's top bit says that a stdin comes on the listener's
// socket (recvStdin).
func (pj *Prepared) command(in Input, stdin bool) ([]byte, error) {
	p := pj.s.p
	var b []byte
	size := ^uint64(0)
	argv := []string{}
	if in.Program != "" {
		argv = append(argv, in.Program)
	} else {
		size = uint64(len(in.Code))
		file := strings.TrimSuffix(p.Run.Workdir, "/") + "/" + p.Run.File
		for _, a := range p.Run.Command {
			argv = append(argv, strings.ReplaceAll(a, "{file}", file))
		}
	}
	argv = append(argv, in.Args...)
	pj.s.program = argv[0]
	b = binary.LittleEndian.AppendUint64(b, size)
	if in.Program == "" {
		b = append(b, in.Code...)
	}
	argc := uint32(len(argv))
	if stdin {
		argc |= stdinSent
	}
	rest := len(b)
	b = binary.LittleEndian.AppendUint32(b, 0) // the rest's length, below
	b = binary.LittleEndian.AppendUint32(b, argc)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p.Run.Env)))
	n := 8
	for _, a := range append(append([]string{}, argv...), p.Run.Env...) {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, fmt.Errorf("argument or environment entry %q holds a NUL byte", a)
		}
		if len(a) >= 128<<10 { // MAX_ARG_STRLEN
			return nil, fmt.Errorf("an argument or environment entry of %d bytes: execve takes at most 128 KiB each", len(a))
		}
		b = append(append(b, a...), 0)
		n += len(a) + 1
	}
	if n > commandMax || len(argv)+len(p.Run.Env) > 4000 {
		return nil, fmt.Errorf("the arguments and environment take %d bytes in %d entries: at most %d bytes and 4,000 entries", n, len(argv)+len(p.Run.Env), commandMax)
	}
	binary.LittleEndian.PutUint32(b[rest:], uint32(len(b)-rest-4))
	return b, nil
}

// programPath is the program the jail runs, for messages.
func (s *supervisor) programPath() string {
	if s.program != "" {
		return s.program
	}
	return goString(s.plan.path)
}

// stdinSent, in a prepared jail's command's argc, says that the program's
// stdin comes on the listener's socket.
const stdinSent = 1 << 31

// commandMax is the room for argv and the environment in a prepared jail.
const commandMax = 256 << 10

// takeFd hands fd over to its new owner: the run no longer closes it.
func (s *supervisor) takeFd(fd int) int {
	for i, f := range s.fds {
		if f == fd {
			s.fds[i] = -1
		}
	}
	return fd
}

func writeAll(fd int, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := syscall.Write(fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		n += m
	}
	return n, nil
}

func readFullFd(fd int, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := syscall.Read(fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || m == 0 {
			return n, err
		}
		n += m
	}
	return n, nil
}
