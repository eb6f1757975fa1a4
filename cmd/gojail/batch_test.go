package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gojail/gojail/jail"
)

// gojail batch runs each request in a fresh jail prepared ahead: the exact
// result of each, with nothing shared between them.
func TestBatch(t *testing.T) {
	reqs := []string{
		`{"code": "import os; open('/tmp/left', 'w').write('x'); print(os.getpid(), sorted(os.listdir('/tmp')))"}`,
		`{"code": "import os; print(os.getpid(), sorted(os.listdir('/tmp')))"}`,
		`{"code": "import sys; print(sys.stdin.read().upper(), sys.argv[1:])", "stdin": "hello", "args": ["a", "b c"]}`,
		`{"code": "import sys; print(repr(sys.stdin.read()))"}`,
		// Stdin is what a one-shot run's is: a sealed copy, seekable, its
		// size known (a grader's os.read(0, size) read nothing from a
		// pipe), and /dev/null without one.
		`{"code": "import os, sys, stat\nst = os.fstat(0)\nprint(stat.S_ISREG(st.st_mode), os.read(0, st.st_size))\nsys.stdin.seek(0)\nprint(sys.stdin.read(), end='')\ntry:\n    os.write(0, b'x')\nexcept OSError as e:\n    print(e.errno)", "stdin": "line1\nline2\n"}`,
		`{"code": "import os, stat; print(stat.S_ISCHR(os.fstat(0).st_mode), os.read(0, 10))"}`,
		`{"code": "import sys; print(sys.stdin.buffer.read())", "stdin_base64": "AAEC/w=="}`,
		`{"code": "import sys; sys.exit(3)"}`,
		`{"code": "while True: pass"}`,
		`{"code": "print(1)\u0000"}`,
		`{"code": "print(1)", "unknown": 1}`,
		// Keys as spelled, once each (encoding/json alone takes "Program"
		// for "program", and the last of two "code" in any case).
		`{"Program": "/bin/true"}`,
		`{"code": "print(1)", "CODE": "print(2)"}`,
		`{"code": "print(1)", "code": "print(2)"}`,
		`{}`,
		`{"code": "print(1)", "program": "/bin/true"}`,
		"{\"code\": \"print(1) # \xff\"}",
		`{"code": "", "args": [` + strings.Repeat(`"",`, 4000) + `""]}`,
		// A line that is JSON but not an object (null ran an empty file).
		`null`,
		`"` + strings.Repeat("x", 50) + `"`,
		// The submitted file is read-only, as in a one-shot run (see
		// TestIsolation); a request without one finds it empty.
		`{"code": "import os\ntry:\n    open('/work/main.py', 'r+b')\nexcept OSError as e:\n    print(e.errno, os.stat('/work/main.py').st_size)"}`,
		`{"program": "/usr/bin/stat", "args": ["-c", "%s %A", "/work/main.py"]}`,
		// A prepared jail's supervisor takes the filter's listener itself
		// (a one-shot run's init does): what the filter stops is named.
		`{"code": "import ctypes; print('before', flush=True); ctypes.CDLL(None).syscall(0x40000027); print('after')"}`,
		// A line past the limit is answered, not kept, and the batch goes
		// on (it ended the batch with no result for it): its 33 MiB are
		// streamed (see below).
		bigRequest,
		`{"code": "print('still here')"}`,
	}
	want := []struct {
		status jail.Status
		exit   int
		stdout string
		err    string
	}{
		{jail.StatusOK, 0, "2 ['left']\n", ""},
		{jail.StatusOK, 0, "2 []\n", ""},
		{jail.StatusOK, 0, "HELLO ['a', 'b c']\n", ""},
		{jail.StatusOK, 0, "''\n", ""},
		{jail.StatusOK, 0, "True b'line1\\nline2\\n'\nline1\nline2\n1\n", ""},
		{jail.StatusOK, 0, "True b''\n", ""},
		{jail.StatusOK, 0, "b'\\x00\\x01\\x02\\xff'\n", ""},
		{jail.StatusRuntimeError, 3, "", ""},
		{jail.StatusTimeLimit, -1, "", ""},
		{jail.StatusInvalidInput, -1, "", ""},
		{jail.StatusInvalidInput, -1, "", ""},
		{jail.StatusInvalidInput, -1, "", `request: unknown field "Program" (the fields are code, code_base64, program, args, stdin, stdin_base64, id, timeout, output_limit, in lower case)`},
		{jail.StatusInvalidInput, -1, "", `request: unknown field "CODE" (the fields are code, code_base64, program, args, stdin, stdin_base64, id, timeout, output_limit, in lower case)`},
		{jail.StatusInvalidInput, -1, "", `request: field "code" given twice`},
		{jail.StatusInvalidInput, -1, "", `request: give "code", "code_base64" or "program"`},
		{jail.StatusInvalidInput, -1, "", `request: give one of "code", "code_base64" and "program"`},
		{jail.StatusInvalidInput, -1, "", "request: the line is not UTF-8, as JSON text is: send code or stdin that is not text as code_base64 or stdin_base64"},
		{jail.StatusInvalidInput, -1, "", `request: "args" holds more than 4000 entries: a prepared jail takes at most 4000 arguments and environment entries in all`},
		{jail.StatusInvalidInput, -1, "", `request: one JSON object per line, not null`},
		{jail.StatusInvalidInput, -1, "", `request: one JSON object per line, not "` + strings.Repeat("x", 39) + `...`},
		{jail.StatusOK, 0, "30 121\n", ""},
		{jail.StatusOK, 0, "0 -rw-r--r--\n", ""},
		{jail.StatusSyscallBlocked, -1, "before\n", "blocked x32 system call getpid: foreign system-call ABIs are killed"},
		{jail.StatusInvalidInput, -1, "", "request: its line is over 33554432 bytes (32 MiB): send a smaller stdin or code"},
		{jail.StatusOK, 0, "still here\n", ""},
	}
	cmd := exec.Command(gojailBin, "batch", "--cpu-time", "1s", "--timeout", "3s")
	// Not built in memory: this process's resident peak is its children's
	// too until their execve (ru_maxrss), and TestMemoryLimit compares a
	// child's.
	head, tail, _ := strings.Cut(strings.Join(reqs, "\n")+"\n", bigRequest)
	cmd.Stdin = io.MultiReader(strings.NewReader(head+`{"code": "`), io.LimitReader(hashes{}, 33<<20), strings.NewReader(`"}`+tail))
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	track(cmd) // its jails' cgroups are named after it
	if err := cmd.Wait(); err != nil {
		t.Fatalf("gojail batch: %v\n%s", err, stdout.String())
	}
	out := stdout.String()
	if n := strings.Count(out, "\n"); n != len(want) {
		t.Errorf("%d results for %d requests", n, len(want))
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for i := 0; sc.Scan(); i++ {
		var r jail.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %d: %v: %q", i+1, err, sc.Text())
		}
		if i >= len(want) {
			t.Fatalf("more results than requests: %q", sc.Text())
		}
		w := want[i]
		if r.Status != w.status || r.ExitCode != w.exit || r.Stdout != w.stdout || r.LatencyMs <= 0 || (w.err != "" && r.Error != w.err) {
			t.Errorf("request %d: status %s exit %d stdout %q latency %.1f, want %s %d %q (error %q)", i+1, r.Status, r.ExitCode, r.Stdout, r.LatencyMs, w.status, w.exit, w.stdout, r.Error)
		}
	}
	if left := ourCgroups(t); len(left) > 0 {
		t.Fatalf("run cgroups left: %v", left)
	}
}

// bigRequest stands for a request of 33 MiB in TestBatch's list.
const bigRequest = "(33 MiB)"

// hashes reads as an endless run of '#'.
type hashes struct{}

func (hashes) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = '#'
	}
	return len(b), nil
}

// readLines splits the batch's input as a line scanner would, newline or
// CR LF, the last line with or without one; a line past the limit comes
// as its length alone.
func TestReadLines(t *testing.T) {
	in := "a\r\n\n" + strings.Repeat("x", 100) + "\n" + strings.Repeat("y", 101) + "\n" + strings.Repeat("z", 300000) + "\n" + strings.Repeat("c", 100) + "\r\nlast" + strings.Repeat("s", 97)
	lines := make(chan requestLine, 10)
	if err := readLines(context.Background(), strings.NewReader(in), 100, lines); err != nil {
		t.Fatal(err)
	}
	close(lines)
	var got []string
	for l := range lines {
		got = append(got, fmt.Sprintf("%d:%d", len(l.b), l.over))
	}
	want := []string{"1:0", "0:0", "100:0", "0:102", "0:300001", "100:0", "0:101"}
	if !slices.Equal(got, want) {
		t.Fatalf("lines (length:over) %v, want %v", got, want)
	}
}

// A prepared jail loads its filter ahead of the request when the filter
// allows every call of the jail's last steps, and after them when it does
// not: a policy that refuses write on descriptors above 2 would refuse the
// jail's own write of the submitted file if its filter came first.
func TestBatchFilterOrder(t *testing.T) {
	dir := tempDir(t)
	tight := writeFile(t, dir, "tight.toml", `base = "python"
[[seccomp.rules]]
syscalls = ["write"]
action = "errno"
errno = "EPERM"
args = [{index = 0, op = ">", value = 2}]
`, 0o644)
	for _, tc := range []struct {
		policy string
		ahead  bool
	}{{"python", true}, {tight, false}} {
		cmd := exec.Command(gojailBin, "batch", "--debug", "--prepare", "1", "--policy", tc.policy)
		// The write, then a call the default profile refuses (unshare of a
		// user namespace): the filter is in force for the program, early
		// or late.
		cmd.Stdin = strings.NewReader(`{"code": "import ctypes, os\nfd = os.open('/tmp/f', os.O_WRONLY | os.O_CREAT)\ntry:\n    os.write(fd, b'x')\n    print('written')\nexcept PermissionError:\n    print('refused')\nlibc = ctypes.CDLL(None, use_errno=True)\nprint(libc.unshare(0x10000000), os.strerror(ctypes.get_errno()))"}` + "\n")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		track(cmd)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%s: gojail batch: %v\n%s\n%s", tc.policy, err, stdout.String(), stderr.String())
		}
		var r jail.Result
		if err := json.Unmarshal([]byte(stdout.String()), &r); err != nil {
			t.Fatalf("%s: %v: %q", tc.policy, err, stdout.String())
		}
		want := "written\n-1 Operation not permitted\n"
		if !tc.ahead {
			want = "refused\n-1 Operation not permitted\n" // the policy's rule, in force for the program
		}
		if r.Status != jail.StatusOK || r.Stdout != want {
			t.Errorf("%s: status %s stdout %q, want ok %q (error %q)", tc.policy, r.Status, r.Stdout, want, r.Error)
		}
		if got := strings.Contains(stderr.String(), "seccomp: loaded early"); got != tc.ahead {
			t.Errorf("%s: filter loaded ahead %v, want %v", tc.policy, got, tc.ahead)
		}
	}
}

// A batch's own memory stays flat over many runs: the resident size after
// 600 runs is within a few MB of that after 100 (without collection it grew
// by about 160 KB a run).
func TestBatchMemoryFlat(t *testing.T) {
	cmd, stdin, out := startBatch(t, "--policy", "exec")
	rss := func() int {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.Atoi(f[1])
				return kb
			}
		}
		t.Fatal("no VmRSS")
		return 0
	}
	var early int
	for i := 1; i <= 600; i++ {
		fmt.Fprintln(stdin, `{"program": "/bin/true"}`)
		if !out.Scan() {
			t.Fatalf("run %d: no result", i)
		}
		var r jail.Result
		if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.Status != jail.StatusOK {
			t.Fatalf("run %d: %v %s", i, err, out.Text())
		}
		if i == 100 {
			early = rss()
		}
	}
	late := rss()
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	t.Logf("resident: %d KB after 100 runs, %d KB after 600", early, late)
	if late-early > 8<<10 {
		t.Fatalf("the batch grew from %d KB after 100 runs to %d KB after 600", early, late)
	}
}

// SIGTERM, SIGINT or SIGHUP end a batch: idle, at once; mid-request, the
// running program is stopped and its result says so. Either way nothing is
// left, and the batch exits (125 when a result was internal_error).
func TestBatchInterrupted(t *testing.T) {
	for _, tc := range []struct {
		sig     syscall.Signal
		running bool
	}{{syscall.SIGTERM, false}, {syscall.SIGINT, true}, {syscall.SIGHUP, true}, {syscall.SIGTERM, true}} {
		cmd, stdin, out := startBatch(t, "--policy", "exec", "--timeout", "60s")
		fmt.Fprintln(stdin, `{"program": "/bin/true"}`)
		if !out.Scan() {
			t.Fatalf("%v: no first result", tc.sig)
		}
		if tc.running {
			fmt.Fprintln(stdin, `{"program": "/bin/sleep", "args": ["60"]}`)
			time.Sleep(300 * time.Millisecond) // the program runs
		}
		start := time.Now()
		cmd.Process.Signal(tc.sig)
		var results []jail.Result
		for out.Scan() {
			var r jail.Result
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("%v: %v: %q", tc.sig, err, out.Text())
			}
			results = append(results, r)
		}
		err := cmd.Wait() // stdin stays open: the signal alone ends the batch
		took := time.Since(start)
		code := cmd.ProcessState.ExitCode()
		stdin.Close()
		if took > 5*time.Second {
			t.Errorf("%v (running %v): the batch took %v to end", tc.sig, tc.running, took)
		}
		switch {
		case !tc.running && (len(results) != 0 || code != 0):
			t.Errorf("%v idle: results %v, exit %d (%v), want none and 0", tc.sig, results, code, err)
		case tc.running && (len(results) != 1 || results[0].Status != jail.StatusInternalError || results[0].Error != "the run was cancelled" || code != 125):
			t.Errorf("%v mid-request: results %+v, exit %d (%v), want one internal_error, the run was cancelled, and 125", tc.sig, results, code, err)
		}
		if left := ourCgroups(t); len(left) != 0 {
			t.Errorf("%v: run cgroups left: %v", tc.sig, left)
		}
	}
}

// A batch whose reader stops reading still ends on a signal: its result
// write, blocked, held it (and its jails) until the reader went away.
func TestBatchInterruptedWhileWriting(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(gojailBin, "batch")
	// A result of some 500 KB, past what the pipe holds.
	cmd.Stdin = strings.NewReader(`{"code": "print('x' * 500000)"}` + "\n")
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	track(cmd)
	time.Sleep(time.Second) // the run is over, its result half written
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		r.Close() // lets it go
		<-done
		t.Fatal("the batch was still running 10 s after SIGTERM, its result unread")
	}
	if code := cmd.ProcessState.ExitCode(); code != 125 {
		t.Errorf("exit %d, want 125", code)
	}
	if left := ourCgroups(t); len(left) != 0 {
		t.Errorf("run cgroups left: %v", left)
	}
}

// A signal mid-request, with a reader that takes the result slowly: the
// result (the run cancelled) comes whole, and the batch says nothing of its
// reader (the write gave up at the signal, its line cut, and blamed it).
func TestBatchInterruptedSlowReader(t *testing.T) {
	cmd := exec.Command(gojailBin, "batch", "--timeout", "20s")
	cmd.Stdin = strings.NewReader(`{"code": "import sys, time\nsys.stdout.write('x' * 900000)\nsys.stdout.flush()\ntime.sleep(10)"}` + "\n")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	track(cmd)
	time.AfterFunc(time.Second, func() { cmd.Process.Signal(syscall.SIGTERM) })
	var out []byte
	buf := make([]byte, 32<<10)
	for {
		n, err := stdout.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Wait()
	var r jail.Result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("the result (%d bytes) is not whole: %v; gojail's stderr %q", len(out), err, stderr.String())
	}
	if r.Status != jail.StatusInternalError || r.Error != "the run was cancelled" || len(r.Stdout) != 900000 || stderr.Len() != 0 {
		t.Fatalf("%s %q, %d bytes of stdout, gojail's stderr %q; want internal_error, the run was cancelled, 900000, nothing", r.Status, r.Error, len(r.Stdout), stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 125 {
		t.Errorf("exit %d, want 125", code)
	}
}

// A request's "id" comes back in its result as it was given, a string or
// a number, also when the request is refused; every line gets its result,
// an empty one too.
func TestBatchRequestID(t *testing.T) {
	cmd, stdin, out := startBatch(t, "--policy", "exec")
	for _, tc := range []struct {
		line, id string
		status   jail.Status
		err      string
	}{
		{`{"id": "sub-42", "program": "/bin/true"}`, `"sub-42"`, jail.StatusOK, ""},
		{`{"program": "/bin/true", "id": 7}`, `7`, jail.StatusOK, ""},
		{`{"id": "bad", "program": 3}`, `"bad"`, jail.StatusInvalidInput, "request: json: cannot unmarshal number into Go struct field request.program of type string"},
		{`{"id": {"a": 1}, "program": "/bin/true"}`, ``, jail.StatusInvalidInput, `request: "id" is a JSON string or number of at most 1024 bytes`},
		// Refused before its id was read, it came back without it.
		{`{"Program": "/bin/true", "id": 9}`, `9`, jail.StatusInvalidInput, `request: unknown field "Program" (the fields are code, code_base64, program, args, stdin, stdin_base64, id, timeout, output_limit, in lower case)`},
		{`{"program": "/bin/true", "program": "/bin/true", "id": 10}`, `10`, jail.StatusInvalidInput, `request: field "program" given twice`},
		{"{\"code\": \"\xff\", \"id\": 11}", `11`, jail.StatusInvalidInput, "request: the line is not UTF-8, as JSON text is: send code or stdin that is not text as code_base64 or stdin_base64"},
		{``, ``, jail.StatusInvalidInput, "request: an empty line: one JSON object per line"},
		// null is no value: {"code": null} ran an empty file.
		{`{"id": 12, "code": null}`, `12`, jail.StatusInvalidInput, `request: "code" is null: give its value, or leave the field out`},
		{`{"code_base64": null, "id": 13}`, `13`, jail.StatusInvalidInput, `request: "code_base64" is null: give its value, or leave the field out`},
		{`{"program": "/bin/true", "args": null, "id": 14}`, `14`, jail.StatusInvalidInput, `request: "args" is null: give its value, or leave the field out`},
		{`{"id": null, "program": "/bin/true"}`, ``, jail.StatusInvalidInput, `request: "id" is a JSON string or number of at most 1024 bytes`},
		{`{"program": "", "id": 15}`, `15`, jail.StatusInvalidInput, `request: "program" is empty: give an absolute path, or a name looked up in the jail's PATH`},
		{`{"program": "/bin/true"}`, ``, jail.StatusOK, ""},
	} {
		fmt.Fprintln(stdin, tc.line)
		if !out.Scan() {
			t.Fatalf("%s: no result", tc.line)
		}
		var r jail.Result
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if string(r.ID) != tc.id || r.Status != tc.status || r.Error != tc.err {
			t.Errorf("%s: id %s, %s %q; want id %s, %s %q", tc.line, r.ID, r.Status, r.Error, tc.id, tc.status, tc.err)
		}
	}
	stdin.Close()
	cmd.Wait()
}

// A request may lower the batch's wall-clock and output limits for itself
// (one batch, problems of different limits), never raise them; the next
// request has the batch's again.
func TestBatchRequestLimits(t *testing.T) {
	cmd, stdin, out := startBatch(t, "--policy", "exec", "--timeout", "3s")
	for _, tc := range []struct {
		line   string
		status jail.Status
		stdout string
		err    string
	}{
		{`{"program": "/bin/sleep", "args": ["5"], "timeout": "300ms"}`, jail.StatusTimeLimit, "", "wall-clock limit of 300ms exceeded"},
		{`{"program": "/bin/echo", "args": ["0123456789abcdef"], "output_limit": "10B"}`, jail.StatusOK, "0123456789", ""},
		{`{"program": "/bin/sleep", "args": ["0.5"]}`, jail.StatusOK, "", ""},
		{`{"program": "/bin/echo", "args": ["0123456789abcdef"]}`, jail.StatusOK, "0123456789abcdef\n", ""},
		{`{"program": "/bin/true", "timeout": "10s"}`, jail.StatusInvalidInput, "", `request: timeout "10s": a duration over 0 and at most the batch's, 3s`},
		{`{"program": "/bin/true", "output_limit": "2MiB"}`, jail.StatusInvalidInput, "", `request: output_limit "2MiB": a size over 0 and at most the batch's, 1MiB`},
	} {
		fmt.Fprintln(stdin, tc.line)
		if !out.Scan() {
			t.Fatalf("%s: no result", tc.line)
		}
		var r jail.Result
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Status != tc.status || r.Stdout != tc.stdout || r.Error != tc.err {
			t.Errorf("%s: %s %q, stdout %q; want %s %q, stdout %q", tc.line, r.Status, r.Error, r.Stdout, tc.status, tc.err, tc.stdout)
		}
	}
	stdin.Close()
	cmd.Wait()
}

// A prepared jail killed from the host while it waits (an idle jail's init
// is the OOM killer's first choice) is replaced for the request that would
// have had it, which runs as any other.
func TestBatchPreparedJailKilled(t *testing.T) {
	cmd, stdin, out := startBatch(t, "--policy", "exec", "--prepare", "1")
	defer cmd.Wait()
	defer stdin.Close()
	result := func() jail.Result {
		t.Helper()
		if !out.Scan() {
			t.Fatal("no result")
		}
		var r jail.Result
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	// The first jail's init, then, once the first run has taken it and
	// it is gone, the next one's.
	initOf := func(not int) int {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if kids := children(cmd.Process.Pid); len(kids) == 1 && kids[0] != not {
				return kids[0]
			}
		}
		t.Fatalf("the batch's children: %v, want one prepared jail's init other than %d", children(cmd.Process.Pid), not)
		return 0
	}
	first := initOf(0)
	fmt.Fprintln(stdin, `{"program": "/bin/true"}`)
	if r := result(); r.Status != jail.StatusOK {
		t.Fatalf("first request: %s %q", r.Status, r.Error)
	}
	inits := []int{initOf(first)}
	time.Sleep(200 * time.Millisecond) // its setup done
	syscall.Kill(inits[0], syscall.SIGKILL)
	time.Sleep(100 * time.Millisecond)
	fmt.Fprintln(stdin, `{"program": "/bin/echo", "args": ["after"]}`)
	if r := result(); r.Status != jail.StatusOK || r.Stdout != "after\n" {
		t.Fatalf("the request after the kill: %s %q, stdout %q; want ok, \"after\"", r.Status, r.Error, r.Stdout)
	}
}

// children are pid's child processes.
func children(pid int) []int {
	var kids []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				kids = append(kids, n)
			}
		}
	}
	return kids
}

// A batch refuses what it would not do as asked: an argument (the flags
// after it would go unread), and more prepared jails than its descriptor
// limit holds (each past it failed its request).
func TestBatchRefusesAtStart(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{gojailBin, "batch", "--policy", "exec", "reqs.jsonl", "--timeout", "200ms"},
			`gojail batch takes no arguments, its requests come on stdin, one JSON object per line: "reqs.jsonl" given (and any flag after it was not read)`},
		{[]string{"prlimit", "--nofile=300", gojailBin, "batch", "--prepare", "64"},
			"--prepare 64: its jails hold about 1104 descriptors open, and this process may have 300 (ulimit -n): keep at most 13 ready, or raise the limit"},
	} {
		cmd := exec.Command(tc.args[0], tc.args[1:]...)
		cmd.Stdin = strings.NewReader(`{"program": "/bin/sleep", "args": ["3"]}` + "\n")
		out, err := cmd.Output()
		var r jail.Result
		json.Unmarshal(out, &r)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 125 || r.Status != jail.StatusInvalidInput || r.Error != tc.err {
			t.Errorf("%v: %v, %s %q; want exit 125, invalid_input %q", tc.args, err, r.Status, r.Error, tc.err)
		}
	}
}

// A binary submission comes as code_base64 (its bytes are not UTF-8), and
// is run as a one-shot run's FILE under the exec policy.
func TestBatchBinarySubmission(t *testing.T) {
	bin, err := os.ReadFile("/bin/echo")
	if err != nil {
		t.Skip(err)
	}
	r := batchOne(t, fmt.Sprintf("{\"code_base64\": %q, \"args\": [\"binary\"]}", base64.StdEncoding.EncodeToString(bin)), "--policy", "exec")
	if r.Status != jail.StatusOK || r.Stdout != "binary\n" {
		t.Fatalf("%s %q, stdout %q; want ok, \"binary\"", r.Status, r.Error, r.Stdout)
	}
}

// A prepared jail's stdin comes on the listener's socket (recvStdin): a
// filter that refuses recvmsg is loaded after that step, and the run works.
func TestBatchFilterRefusesRecvmsg(t *testing.T) {
	pol := writeFile(t, tempDir(t), "norecv.toml", `base = "python"
[[seccomp.rules]]
syscalls = ["recvmsg"]
action = "errno"
errno = "EPERM"
`, 0o644)
	cmd := exec.Command(gojailBin, "batch", "--debug", "--policy", pol)
	cmd.Stdin = strings.NewReader(`{"code": "import sys; print(sys.stdin.read())", "stdin": "in"}` + "\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	track(cmd)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("gojail batch: %v\n%s", err, stdout.String())
	}
	var r jail.Result
	if err := json.Unmarshal([]byte(stdout.String()), &r); err != nil {
		t.Fatalf("%v: %q", err, stdout.String())
	}
	if r.Status != jail.StatusOK || r.Stdout != "in\n" || strings.Contains(stderr.String(), "seccomp: loaded early") {
		t.Fatalf("%s %q, stdout %q, filter early %v; want ok, \"in\", late", r.Status, r.Error, r.Stdout, strings.Contains(stderr.String(), "seccomp: loaded early"))
	}
}

// startBatch starts gojail batch with args, its requests written to stdin
// and its results read from out, one a line.
func startBatch(t *testing.T, args ...string) (*exec.Cmd, io.WriteCloser, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(gojailBin, append([]string{"batch"}, args...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	track(cmd)
	return cmd, stdin, bufio.NewScanner(stdout)
}

// batchOne runs one request in a batch started with args, and returns its
// result.
func batchOne(t *testing.T, request string, args ...string) jail.Result {
	t.Helper()
	cmd, stdin, out := startBatch(t, args...)
	fmt.Fprintln(stdin, request)
	stdin.Close()
	var r jail.Result
	if !out.Scan() {
		t.Fatalf("batch %q: no result", args)
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("batch %q: %v: %q", args, err, out.Bytes())
	}
	cmd.Wait()
	return r
}

// A batch checks a program once and remembers it; a program that is not
// inside the jail is refused every time it is asked for.
func TestBatchProgramChecks(t *testing.T) {
	cmd, stdin, out := startBatch(t, "--policy", "exec")
	want := []jail.Status{jail.StatusOK, jail.StatusOK, jail.StatusInvalidInput, jail.StatusInvalidInput, jail.StatusOK}
	for i, prog := range []string{"/bin/true", "/bin/true", "/etc/shadow", "/etc/shadow", "true"} {
		fmt.Fprintf(stdin, "{\"program\": %q}\n", prog)
		if !out.Scan() {
			t.Fatalf("request %d: no result", i+1)
		}
		var r jail.Result
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Status != want[i] {
			t.Errorf("request %d (%s): status %s (%s), want %s", i+1, prog, r.Status, r.Error, want[i])
		}
	}
	stdin.Close()
	cmd.Wait()
}

// A prepared jail loads its filter ahead of the request only when the
// filter allows pid 2's last steps, the rlimits it sets included, which are
// known only once its cgroup is made (after the clone on cgroup v1). A
// policy that refuses prlimit64 for the file-size limit must get its
// filter loaded late, and its runs must work.
func TestBatchFilterRefusesAnRlimit(t *testing.T) {
	pol := writeFile(t, tempDir(t), "rl.toml", `base = "exec"
[[seccomp.rules]]
syscalls = ["prlimit64"]
action = "errno"
errno = "EPERM"
args = [{index = 1, op = "==", value = 1}]
`, 0o644) // RLIMIT_FSIZE
	cmd, stdin, out := startBatch(t, "--policy", pol)
	for i := 0; i < 2; i++ {
		fmt.Fprintln(stdin, `{"program": "/bin/true"}`)
		if !out.Scan() {
			t.Fatalf("request %d: no result", i+1)
		}
		var r jail.Result
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Status != jail.StatusOK {
			t.Fatalf("request %d: %s %q, want ok", i+1, r.Status, r.Error)
		}
	}
	stdin.Close()
	cmd.Wait()
}

// A batch whose flags give a limit out of range refuses to start, naming
// the flag, with one invalid_input result and exit 125.
func TestBatchBadLimitFlag(t *testing.T) {
	cmd := exec.Command(gojailBin, "batch", "--timeout", "0")
	cmd.Stdin = strings.NewReader("{\"code\": \"print(1)\"}\n")
	out, err := cmd.Output()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 125 {
		t.Fatalf("gojail batch --timeout 0: %v, want exit 125", err)
	}
	var r jail.Result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("stdout %q: %v", out, err)
	}
	if r.Status != jail.StatusInvalidInput || !strings.Contains(r.Error, "--timeout (limits.wall_time) is 0s") {
		t.Fatalf("status %s, error %q", r.Status, r.Error)
	}
	// A flag batch does not know is a JSON result too (it was text only).
	cmd = exec.Command(gojailBin, "batch", "--frobnicate")
	out, err = cmd.Output()
	r = jail.Result{}
	json.Unmarshal(out, &r)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 125 || r.Status != jail.StatusInvalidInput || r.Error != "flag provided but not defined: -frobnicate (see gojail batch --help)" {
		t.Fatalf("gojail batch --frobnicate: %v, stdout %q", err, out)
	}
}

// Every program keeps the timer slack of gojail's caller (gojail's main
// thread): a prepared jail's init may be cloned from a thread the Go
// runtime's monitor started, which has the monitor's 250 µs as root
// (package oneproc), and a program inherits its slack through execve.
func TestProgramTimerSlack(t *testing.T) {
	cmd := exec.Command(gojailBin, "batch", "--policy", "exec")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	track(cmd)
	want := ""
	if isRoot() { // rootless, gojail's /proc files are not this process's to read (not dumpable)
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/timerslack_ns", cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		want = strings.TrimSpace(string(b))
	}
	const n = 24
	for i := 0; i < n; i++ {
		io.WriteString(stdin, `{"program": "/bin/cat", "args": ["/proc/self/timerslack_ns"]}`+"\n")
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("gojail batch: %v\n%s", err, stdout.String())
	}
	got := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(stdout.String()))
	for sc.Scan() {
		var r jail.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Status != jail.StatusOK {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		got[strings.TrimSpace(r.Stdout)]++
	}
	if len(got) != 1 || (want != "" && got[want] != n) {
		t.Fatalf("the programs' timer slack: %v, want all %d the same (gojail's main thread: %q)", got, n, want)
	}
}

// readable reads what a pipe brings, to its EOF, waiting in Go's poller;
// what epoll cannot watch (a regular file, /dev/null) is read directly.
func TestReadable(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rr := readable(r)
	if _, ok := rr.(*readableReader); !ok {
		t.Fatalf("a pipe is read as %T, want *readableReader", rr)
	}
	go func() {
		for _, s := range []string{"one\n", "two\n"} {
			time.Sleep(10 * time.Millisecond)
			w.WriteString(s)
		}
		w.Close()
	}()
	b, err := io.ReadAll(rr)
	if string(b) != "one\ntwo\n" || err != nil {
		t.Fatalf("read %q, %v; want %q", b, err, "one\ntwo\n")
	}
	for _, path := range []string{"/etc/hostname", "/dev/null"} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := readable(f); got != io.Reader(f) {
			t.Errorf("%s is read as %T, want the file itself", path, got)
		}
		f.Close()
	}
}

// A program that reads its own stdout, through /proc/self/fd/1 (rootless,
// where it is the caller's user; as root the open is refused), gets EOF
// once it has closed its own write ends, in a batch as in a run: the
// supervisor holds no write end of the jail's output pipes.
func TestBatchOwnStdoutEOF(t *testing.T) {
	code := "import os\ntry:\n    r = os.open('/proc/self/fd/1', os.O_RDONLY)\nexcept PermissionError:\n    os._exit(4)\nos.close(1)\nos.close(2)\nos._exit(3 + len(os.read(r, 100)))"
	want := 3 // EOF
	if isRoot() {
		want = 4
	}
	run := py(t, code, "--timeout", "3s")
	r := batchOne(t, fmt.Sprintf("{\"code\": %q}", code), "--timeout", "3s")
	for _, got := range []struct {
		how string
		r   jail.Result
	}{{"run", run.res}, {"batch", r}} {
		if got.r.Status != jail.StatusRuntimeError || got.r.ExitCode != want {
			t.Errorf("%s: %s exit %d (%q), want runtime_error exit %d", got.how, got.r.Status, got.r.ExitCode, got.r.Error, want)
		}
	}
}
