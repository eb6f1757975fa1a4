package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/jail"
	"github.com/gojail/gojail/policy"
	"github.com/gojail/gojail/validate"
)

// prepared is a jail made ahead, or why it could not be.
type prepared struct {
	pj  *jail.Prepared
	err error
}

// request is one line of gojail batch's input.
type request struct {
	Code    string   `json:"code"`    // the submitted file's contents
	Program string   `json:"program"` // or a program inside the jail (exec policy)
	Args    []string `json:"args"`
	Stdin   string   `json:"stdin"`
}

func batchCommand() *cli.Command {
	flags := []cli.Flag{intFlag(&cli.IntFlag{Name: "prepare", Value: 2, Usage: "jails kept prepared ahead of the requests"})}
	for _, f := range runCommand().Flags {
		switch f.Names()[0] {
		case "c", "json", "stdin", "seccomp-log":
		default:
			flags = append(flags, f)
		}
	}
	return &cli.Command{
		Name:  "batch",
		Usage: "run many programs, one per JSON line on stdin, each in a fresh jail prepared ahead; one JSON result per line on stdout",
		Description: `Each input line is {"code": "...", "args": [...], "stdin": "..."} or {"program": "/usr/bin/x", "args": [...]}.
While one program runs, the next jail is prepared (namespaces, root, cgroup, filter), so a
run costs little more than the program; every run still gets a jail no earlier run touched.
Each result has "latency_ms": from reading the request to the result.`,
		Flags:        flags,
		OnUsageError: usageError,
		Action:       batchAction,
	}
}

func batchAction(c *cli.Context) error {
	ref := c.String("policy")
	if ref == "" {
		ref = "python"
	}
	p, err := policy.Load(ref)
	if err == nil {
		err = withFlags(c, setFlags(c), &p)
	}
	if err == nil {
		err = checkFilter(&p)
	}
	if err != nil {
		return finish(c, jail.Failed(jail.StatusInvalidInput, err), true)
	}

	// A batch lives for many runs: its heap is collected (main turns the
	// collector off for one run), or every run's allocations would stay,
	// about 160 KB of resident memory each (248 MB after 1,500 runs).
	debug.SetGCPercent(100)
	// Jails are prepared ahead, --prepare of them; a new one is made when a
	// run has ended, so that preparing does not compete with the run for
	// the CPUs: with requests a little apart, each finds a jail ready.
	ahead := c.Int("prepare")
	if ahead < 1 || ahead > 64 {
		return finish(c, jail.Failed(jail.StatusInvalidInput, fmt.Errorf("--prepare %d: keep between 1 and 64 jails ready", ahead)), true)
	}
	// A reader that goes away gets EPIPE on the next result, not SIGPIPE.
	// SIGINT, SIGTERM and SIGHUP end the input: a running request is
	// stopped (its result says it was cancelled), no other starts, and
	// every jail is torn down before gojail exits.
	signal.Ignore(syscall.SIGPIPE)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()
	// --debug: every jail's steps, each line with the time since start.
	var logf func(string, ...any)
	if c.Bool("debug") {
		start := time.Now()
		logf = func(format string, a ...any) {
			fmt.Fprintf(os.Stderr, "gojail: %7.3fms "+format+"\n", append([]any{float64(time.Since(start).Microseconds()) / 1000}, a...)...)
		}
	}
	next := make(chan prepared, ahead)
	want := make(chan struct{}, ahead)
	for i := 0; i < ahead; i++ {
		want <- struct{}{}
	}
	stop := make(chan struct{})
	preparerDone := make(chan struct{})
	go func() {
		defer close(preparerDone)
		for {
			select {
			case <-want:
			case <-stop:
				return
			case <-ctx.Done():
				return
			}
			pj, err := jail.Prepare(ctx, &p, logf) // a signal gives up a jail being made
			next <- prepared{pj, err}
		}
	}()
	defer func() {
		close(stop)
		<-preparerDone
		close(next)
		for pr := range next { // give up the jails no request used
			if pr.pj != nil {
				pr.pj.Close()
			}
		}
	}()

	// The requests are read on a goroutine of their own: a read blocked on
	// an idle input cannot be interrupted, and a signal must still end the
	// batch. It is left blocked when gojail exits.
	lines := make(chan requestLine)
	var readErr error
	go func() {
		defer close(lines)
		readErr = readLines(ctx, readable(os.Stdin), maxRequest, lines) // read after lines is closed
	}()
	failed := false
	programs := programCache{}
	var teardowns sync.WaitGroup // every jail torn down before gojail exits
	defer teardowns.Wait()
	for {
		var line requestLine
		var ok bool
		waiting := time.Now()
		select {
		case line, ok = <-lines:
		case <-ctx.Done():
		}
		if !ok || ctx.Err() != nil {
			break
		}
		// The latency runs from when the request was read or, if it was
		// read while the previous one ran, from when that one's result
		// was written.
		t0 := line.at
		if t0.Before(waiting) {
			t0 = waiting
		}
		var r *jail.Result
		var pj *jail.Prepared
		var used bool
		if line.over > 0 {
			r = jail.Failed(jail.StatusInvalidInput, fmt.Errorf("request: its line is over %d bytes (%d MiB): send a smaller stdin or code", maxRequest, maxRequest>>20))
		} else {
			r, pj, used = runRequest(ctx, &p, line.b, next, programs)
		}
		r.LatencyMs = ms(time.Since(t0))
		if pj != nil {
			teardowns.Add(1)
			go func() { pj.Wait(); teardowns.Done() }()
		}
		if used {
			want <- struct{}{} // prepare another
		}
		if err := r.WriteJSON(os.Stdout); err != nil {
			return cli.Exit("write result: "+err.Error(), 125)
		}
		failed = failed || r.Status == jail.StatusInternalError
	}
	if ctx.Err() == nil && readErr != nil {
		return cli.Exit("read requests: "+readErr.Error(), 125)
	}
	if failed {
		return cli.Exit("", 125)
	}
	return nil
}

// maxRequest is the longest request line a batch reads: a longer one gets
// an invalid_input result and is not kept (one of 120 MiB took the batch to
// 622 MB).
const maxRequest = 32 << 20

// requestLine is one line of a batch's input, without its newline (or a
// carriage return before it); over counts the bytes of a line longer than
// the limit, which is dropped.
type requestLine struct {
	b    []byte
	over int
	at   time.Time // when its last byte was read
}

// readLines sends r's lines to lines until r ends (nil) or fails, or ctx is
// done. A line longer than max is sent empty, with its length in over, and
// is never held whole.
func readLines(ctx context.Context, r io.Reader, max int, lines chan<- requestLine) error {
	in := bufio.NewReaderSize(r, 64<<10)
	for {
		var line requestLine
		var err error
		for {
			var part []byte
			part, err = in.ReadSlice('\n')
			// The line's own bytes, without its newline or a CR before it.
			content := len(part)
			if bytes.HasSuffix(part, []byte("\r\n")) {
				content -= 2
			} else if bytes.HasSuffix(part, []byte("\n")) {
				content--
			}
			if line.over > 0 || len(line.b)+content > max {
				line.over += len(line.b) + len(part)
				line.b = nil
			} else {
				line.b = append(line.b, part...)
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && err != io.EOF {
			return err
		}
		if len(line.b) == 0 && line.over == 0 && err == io.EOF {
			return nil
		}
		line.b = bytes.TrimSuffix(bytes.TrimSuffix(line.b, []byte("\n")), []byte("\r"))
		line.at = time.Now()
		select {
		case lines <- line:
		case <-ctx.Done():
			return nil
		}
		if err == io.EOF {
			return nil
		}
	}
}

// runRequest decodes and checks one request and runs it in the next
// prepared jail. It returns the jail it ran, whose teardown the caller
// waits for, and says whether it took one (which then needs replacing).
func runRequest(ctx context.Context, p *policy.Policy, line []byte, next <-chan prepared, programs programCache) (*jail.Result, *jail.Prepared, bool) {
	var req request
	if err := exactKeys(line); err != nil {
		return jail.Failed(jail.StatusInvalidInput, fmt.Errorf("request: %v", err)), nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return jail.Failed(jail.StatusInvalidInput, fmt.Errorf("request: %v", err)), nil, false
	}
	if dec.More() {
		return jail.Failed(jail.StatusInvalidInput, errors.New("request: one JSON object per line")), nil, false
	}
	if req.Program != "" && req.Code != "" {
		return jail.Failed(jail.StatusInvalidInput, errors.New(`request: give "code" or "program", not both`)), nil, false
	}
	in := jail.Input{Args: req.Args}
	if req.Stdin != "" { // else the pipe is closed: reads see EOF at once
		in.StdinData = []byte(req.Stdin)
	}
	var err error
	if req.Program != "" {
		in.Program, err = programs.check(req.Program, p)
	} else {
		in.Code = []byte(req.Code)
		err = validate.Code(in.Code, p, "code")
	}
	if err != nil {
		return jail.Failed(jail.StatusInvalidInput, err), nil, false
	}
	var pr prepared
	select {
	case pr = <-next:
	case <-ctx.Done(): // a signal while the next jail is made: it stays for the teardown
		return jail.Failed(jail.StatusInternalError, errors.New("the run was cancelled")), nil, false
	}
	if pr.err != nil {
		return jail.Failed(jail.StatusInternalError, pr.err), nil, true
	}
	return pr.pj.Run(ctx, in), pr.pj, true
}

// requestKeys are a request's fields, spelled exactly.
var requestKeys = []string{"code", "program", "args", "stdin"}

// exactKeys refuses a request object whose keys are not requestKeys as
// spelled, or that gives one twice: encoding/json matches keys without
// regard to case, and keeps the last of two, so that {"Program": ...} or
// {"code": ..., "CODE": ...} got past a caller that looked for "program" or
// "code" itself. Anything else wrong is left to the decoder to say.
func exactKeys(line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil {
		return nil // the decoder says what is wrong
	} else if t != json.Delim('{') {
		if len(line) > 40 {
			line = append(line[:40:40], "..."...)
		}
		return fmt.Errorf("one JSON object per line, not %s", line)
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := t.(string)
		if !slices.Contains(requestKeys, key) {
			return fmt.Errorf("unknown field %q (the fields are %s, in lower case)", key, strings.Join(requestKeys, ", "))
		}
		if seen[key] {
			return fmt.Errorf("field %q given twice", key)
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil
		}
	}
	return nil
}

// programCache remembers the programs a batch has found inside its jails:
// resolving the links of a program's path and of the binds for every
// request took longer than the rest of a request's checks. The jail's
// execve still decides: a program gone since is an invalid_input of its
// own ("cannot run ... inside the jail").
type programCache map[string]string

func (c programCache) check(name string, p *policy.Policy) (string, error) {
	if path, ok := c[name]; ok {
		return path, nil
	}
	path, err := validate.Program(name, p)
	if err == nil {
		if len(c) >= 1024 {
			clear(c)
		}
		c[name] = path
	}
	return path, err
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// readable reads f (the batch's input) only once it is readable, so that
// the reader waits in Go's poller: a read blocked in the kernel holds the
// one P (GOMAXPROCS is 1) until the runtime's monitor takes it back, and
// the request just passed on waited for that, 0.3 ms. The wait is on an
// epoll set of ours that the runtime's poller watches; f's own flags,
// shared with the caller, are left as they are. A regular file or
// /dev/null, which epoll refuses, is read directly: its reads do not wait.
func readable(f *os.File) io.Reader {
	fd := -1
	if sc, err := f.SyscallConn(); err == nil { // not f.Fd(), which would make it blocking
		sc.Control(func(u uintptr) { fd = int(u) })
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return f
	}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN}); err != nil {
		unix.Close(ep)
		return f
	}
	unix.SetNonblock(ep, true)
	epf := os.NewFile(uintptr(ep), "epoll")
	rc, err := epf.SyscallConn()
	if err != nil {
		epf.Close()
		return f
	}
	return &readableReader{f: f, ep: epf, rc: rc}
}

type readableReader struct {
	f  *os.File
	ep *os.File // kept open: the runtime's poller watches it
	rc syscall.RawConn
	ev [1]unix.EpollEvent
}

func (r *readableReader) Read(b []byte) (int, error) {
	var err error
	ready := func(ep uintptr) bool {
		n := 0
		for n, err = unix.EpollWait(int(ep), r.ev[:], 0); err == unix.EINTR; {
			n, err = unix.EpollWait(int(ep), r.ev[:], 0)
		}
		return n > 0 || err != nil
	}
	if werr := r.rc.Read(ready); werr != nil {
		return 0, werr
	}
	if err != nil {
		return 0, err
	}
	return r.f.Read(b)
}
