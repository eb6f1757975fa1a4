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
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

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

// request is one line of gojail batch's input: the submitted file (code,
// or code_base64 for bytes that are not UTF-8 text, a compiled submission
// say) or a program inside the jail (program), its arguments, and its stdin
// (stdin, or stdin_base64).
type request struct {
	Code        string   `json:"code"`
	CodeBase64  []byte   `json:"code_base64"`
	Program     string   `json:"program"`
	Args        []string `json:"args"`
	Stdin       string   `json:"stdin"`
	StdinBase64 []byte   `json:"stdin_base64"`
	// ID, a JSON string or number of the caller's, comes back in the
	// result as it came (exactKeys takes it).
	ID json.RawMessage `json:"id"`
	// Timeout and OutputLimit lower the batch's wall-clock and output
	// limits for this request ("2s", "64KiB").
	Timeout     string `json:"timeout"`
	OutputLimit string `json:"output_limit"`
}

func batchCommand() *cli.Command {
	flags := []cli.Flag{intFlag(&cli.IntFlag{Name: "prepare", Value: 2, Usage: "jails kept prepared ahead of the requests"})}
	for _, f := range runCommand().Flags {
		switch f.Names()[0] {
		case "c", "stdin", "seccomp-log":
		case "json": // taken, and nothing to do: a batch's results are JSON
			flags = append(flags, boolFlag(&cli.BoolFlag{Name: "json", Usage: "accepted; a batch's results are JSON anyway"}))
		default:
			flags = append(flags, f)
		}
	}
	return &cli.Command{
		Name:  "batch",
		Usage: "run many programs, one per JSON line on stdin, each in a fresh jail prepared ahead; one JSON result per line on stdout",
		Description: `Each input line is {"code": "...", "args": [...], "stdin": "..."} or {"program": "/usr/bin/x", "args": [...]}.
Code or stdin that is not UTF-8 text comes base64-encoded, as "code_base64" or "stdin_base64".
An "id" (a JSON string or number) comes back in the request's result. A line is at most 32 MiB.
"timeout" and "output_limit" ("2s", "64KiB") lower the batch's limits for one request.
While one program runs, the next jail is prepared (namespaces, root, cgroup, filter), so a
run costs little more than the program; every run still gets a jail no earlier run touched.
Each result has "latency_ms": from reading the request to the result.`,
		Flags: flags,
		// Its output is JSON results: a bad flag is one too.
		OnUsageError: func(c *cli.Context, err error, sub bool) error {
			return finish(c, jail.Failed(jail.StatusInvalidInput, fmt.Errorf("%v (see gojail batch --help)", err)), true)
		},
		Action: batchAction,
	}
}

func batchAction(c *cli.Context) error {
	if c.Args().Present() {
		return finish(c, jail.Failed(jail.StatusInvalidInput, fmt.Errorf("gojail batch takes no arguments, its requests come on stdin, one JSON object per line: %q given (and any flag after it was not read)", c.Args().First())), true)
	}
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
	if err := descriptorRoom(ahead); err != nil {
		return finish(c, jail.Failed(jail.StatusInvalidInput, err), true)
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
			r, pj, used = runRequest(ctx, &p, line.b, next, programs, logf)
		}
		r.LatencyMs = ms(time.Since(t0))
		if pj != nil {
			teardowns.Add(1)
			go func() { pj.Wait(); teardowns.Done() }()
		}
		if used {
			want <- struct{}{} // prepare another
		}
		if err := writeResult(ctx, r); err != nil {
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

// writeResult writes r as one line of the batch's output. Once ctx is done
// (a signal), it goes on while the reader takes the result, and gives up
// after a second in which it took nothing: a reader that stopped reading
// cannot keep the batch past a signal. The write is then left blocked, and
// gojail exits.
func writeResult(ctx context.Context, r *jail.Result) error {
	out := &progressWriter{w: os.Stdout}
	done := make(chan error, 1)
	go func() { done <- r.WriteJSON(out) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	for last := int64(-1); ; {
		select {
		case err := <-done:
			return err
		case <-time.After(time.Second):
		}
		n := out.n.Load()
		if n == last {
			return errors.New("interrupted, the reader had not taken it")
		}
		last = n
	}
}

// progressWriter counts what w has taken.
type progressWriter struct {
	w io.Writer
	n atomic.Int64
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n.Add(int64(n))
	return n, err
}

// jailDescriptors is about how many descriptors a prepared jail holds
// open in the batch (12, and a run's few more).
const jailDescriptors = 16

// descriptorRoom refuses a --prepare whose jails would not fit under this
// process's descriptor limit: each jail past it would fail its request.
func descriptorRoom(ahead int) error {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil || lim.Cur == unix.RLIM_INFINITY {
		return nil
	}
	const own = 64 // the batch's own, and a run's
	need := uint64(ahead+1)*jailDescriptors + own
	if need <= lim.Cur {
		return nil
	}
	if most := (int64(lim.Cur)-own)/jailDescriptors - 1; most >= 1 {
		return fmt.Errorf("--prepare %d: its jails hold about %d descriptors open, and this process may have %d (ulimit -n): keep at most %d ready, or raise the limit", ahead, need, lim.Cur, most)
	}
	return fmt.Errorf("--prepare %d: its jails hold about %d descriptors open, and this process may have %d (ulimit -n): raise the limit", ahead, need, lim.Cur)
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
func runRequest(ctx context.Context, p *policy.Policy, line []byte, next <-chan prepared, programs programCache, logf func(string, ...any)) (r *jail.Result, _ *jail.Prepared, _ bool) {
	var req request
	if len(bytes.TrimSpace(line)) == 0 {
		return jail.Failed(jail.StatusInvalidInput, errors.New("request: an empty line: one JSON object per line")), nil, false
	}
	seen, id, err := exactKeys(line)
	defer func() { r.ID = id }() // whatever else is wrong with the request
	if !utf8.Valid(line) {
		return jail.Failed(jail.StatusInvalidInput, errors.New("request: the line is not UTF-8, as JSON text is: send code or stdin that is not text as code_base64 or stdin_base64")), nil, false
	}
	if err != nil {
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
	switch n := count(seen, "code", "code_base64", "program"); {
	case n == 0:
		return jail.Failed(jail.StatusInvalidInput, errors.New(`request: give "code", "code_base64" or "program"`)), nil, false
	case n > 1:
		return jail.Failed(jail.StatusInvalidInput, errors.New(`request: give one of "code", "code_base64" and "program"`)), nil, false
	}
	if count(seen, "stdin", "stdin_base64") > 1 {
		return jail.Failed(jail.StatusInvalidInput, errors.New(`request: give "stdin" or "stdin_base64", not both`)), nil, false
	}
	in := jail.Input{Args: req.Args}
	if seen["timeout"] {
		if in.WallTime, err = policy.ParseDuration(req.Timeout); err != nil || in.WallTime <= 0 || in.WallTime > p.Limits.WallTime {
			return jail.Failed(jail.StatusInvalidInput, fmt.Errorf("request: timeout %q: a duration over 0 and at most the batch's, %s", req.Timeout, p.Limits.WallTime)), nil, false
		}
	}
	if seen["output_limit"] {
		if in.Output, err = policy.ParseSize(req.OutputLimit); err != nil || in.Output <= 0 || in.Output > p.Limits.Output {
			return jail.Failed(jail.StatusInvalidInput, fmt.Errorf("request: output_limit %q: a size over 0 and at most the batch's, %s", req.OutputLimit, p.Limits.Output)), nil, false
		}
	}
	switch { // else none: /dev/null, as a one-shot run's
	case req.Stdin != "":
		in.StdinData = []byte(req.Stdin)
	case len(req.StdinBase64) > 0:
		in.StdinData = req.StdinBase64
	}
	switch {
	case seen["program"]:
		in.Program, err = programs.check(req.Program, p)
	case seen["code_base64"]:
		in.Code = req.CodeBase64
		err = validate.Code(in.Code, p, "code_base64")
	default:
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
	if pr.err != nil || !pr.pj.Alive() {
		// A jail that could not be made, or has ended since (killed from
		// the host): the request gets one made now, not that failure.
		if pr.pj != nil {
			pr.pj.Close()
		}
		pj, err := jail.Prepare(ctx, p, logf)
		if err != nil {
			return jail.Failed(jail.StatusInternalError, err), nil, true
		}
		pr = prepared{pj: pj}
	}
	return pr.pj.Run(ctx, in), pr.pj, true
}

func count(seen map[string]bool, keys ...string) int {
	n := 0
	for _, k := range keys {
		if seen[k] {
			n++
		}
	}
	return n
}

// requestKeys are a request's fields, spelled exactly.
var requestKeys = []string{"code", "code_base64", "program", "args", "stdin", "stdin_base64", "id", "timeout", "output_limit"}

// maxID is the longest "id" a request may give, as JSON.
const maxID = 1024

// maxArgs is the most arguments a request may give: a prepared jail takes
// at most 4,000 arguments and environment entries in all (jail.Prepared).
const maxArgs = 4000

// exactKeys refuses a request object whose keys are not requestKeys as
// spelled, or that gives one twice: encoding/json matches keys without
// regard to case, and keeps the last of two, so that {"Program": ...} or
// {"code": ..., "CODE": ...} got past a caller that looked for "program" or
// "code" itself. It refuses more than maxArgs arguments before the decoder
// makes a string of each (a line of 11 million empty ones took the batch
// to 590 MB). It returns the keys given and the request's id (nil for
// none), which must be a JSON string or number; anything else wrong is
// left to the decoder to say.
func exactKeys(line []byte) (seen map[string]bool, id json.RawMessage, err error) {
	seen = map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil {
		return seen, nil, nil // the decoder says what is wrong
	} else if t != json.Delim('{') {
		if len(line) > 40 {
			line = append(line[:40:40], "..."...)
		}
		return seen, nil, fmt.Errorf("one JSON object per line, not %s", line)
	}
	// The first problem is the answer; a few keys after it are still read
	// for the id, which comes back with the refusal (all of them, a line of
	// millions of keys, held the batch up for seconds).
	fail := func(e error) {
		if err == nil {
			err = e
		}
	}
	for after := 0; dec.More() && after < len(requestKeys); {
		if err != nil {
			if seen["id"] {
				break
			}
			after++
		}
		t, terr := dec.Token()
		if terr != nil {
			break
		}
		key, _ := t.(string)
		var value json.RawMessage
		if dec.Decode(&value) != nil {
			break
		}
		switch {
		case !slices.Contains(requestKeys, key):
			if err == nil {
				fail(fmt.Errorf("unknown field %q (the fields are %s, in lower case)", key, strings.Join(requestKeys, ", ")))
			}
			continue
		case seen[key]:
			fail(fmt.Errorf("field %q given twice", key))
			continue
		}
		seen[key] = true
		switch {
		case key == "id" && (len(value) == 0 || !strings.ContainsRune(`"-0123456789`, rune(value[0])) || len(value) > maxID):
			fail(fmt.Errorf(`"id" is a JSON string or number of at most %d bytes`, maxID))
		case key == "id" && utf8.Valid(value): // else not echoed: the result is UTF-8
			id = value
		case key == "args" && entriesOver(value, maxArgs):
			fail(fmt.Errorf(`"args" holds more than %d entries: a prepared jail takes at most %d arguments and environment entries in all`, maxArgs, maxArgs))
		case string(value) == "null": // the decoder would leave the field empty: {"code": null} ran an empty file
			fail(fmt.Errorf("%q is null: give its value, or leave the field out", key))
		}
	}
	return seen, id, err
}

// entriesOver reports whether the JSON array raw holds more than max
// entries, looking at no more than max+1 of them.
func entriesOver(raw json.RawMessage, max int) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return false
	}
	for n := 0; dec.More(); n++ {
		if n == max {
			return true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// programCache remembers the programs a batch has found inside its jails:
// resolving the links of a program's path and of the binds for every
// request took longer than the rest of a request's checks. The jail's
// execve still decides: a program gone since is an invalid_input of its
// own ("cannot run ... inside the jail").
type programCache map[string]string

func (c programCache) check(name string, p *policy.Policy) (string, error) {
	if name == "" {
		return "", errors.New(`request: "program" is empty: give an absolute path, or a name looked up in the jail's PATH`)
	}
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
