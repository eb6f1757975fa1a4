package main

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

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
		`{"code": "import sys; sys.exit(3)"}`,
		`{"code": "while True: pass"}`,
		`{"code": "print(1)\u0000"}`,
		`{"code": "print(1)", "unknown": 1}`,
	}
	want := []struct {
		status jail.Status
		exit   int
		stdout string
	}{
		{jail.StatusOK, 0, "2 ['left']\n"},
		{jail.StatusOK, 0, "2 []\n"},
		{jail.StatusOK, 0, "HELLO ['a', 'b c']\n"},
		{jail.StatusOK, 0, "''\n"},
		{jail.StatusRuntimeError, 3, ""},
		{jail.StatusTimeLimit, -1, ""},
		{jail.StatusInvalidInput, -1, ""},
		{jail.StatusInvalidInput, -1, ""},
	}
	cmd := exec.Command(gojailBin, "batch", "--cpu-time", "1s", "--timeout", "3s")
	cmd.Stdin = strings.NewReader(strings.Join(reqs, "\n") + "\n")
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
		if r.Status != w.status || r.ExitCode != w.exit || r.Stdout != w.stdout || r.LatencyMs <= 0 {
			t.Errorf("request %d: status %s exit %d stdout %q latency %.1f, want %s %d %q (error %q)", i+1, r.Status, r.ExitCode, r.Stdout, r.LatencyMs, w.status, w.exit, w.stdout, r.Error)
		}
	}
	if left := ourCgroups(t); len(left) > 0 {
		t.Fatalf("run cgroups left: %v", left)
	}
}
