package validate

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/policy"
)

func TestPresetsAreValid(t *testing.T) {
	for _, name := range policy.PresetNames() {
		p, err := policy.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := Policy(&p); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
}

// Every problem of a policy is reported at once.
func TestEveryProblemReported(t *testing.T) {
	p, err := policy.Load("../testdata/policies/bad/invalid-values.toml")
	if err != nil {
		t.Fatal(err)
	}
	err = Policy(&p)
	if err == nil {
		t.Fatal("accepted")
	}
	want, _ := os.ReadFile("../testdata/policies/bad/invalid-values.err")
	for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
		if !strings.Contains(err.Error(), line) {
			t.Errorf("missing %q in:\n%v", line, err)
		}
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != 11 {
		t.Errorf("%d problems reported, want 11:\n%v", n, err)
	}
}

func TestCode(t *testing.T) {
	py, _ := policy.Preset("python")
	ex, _ := policy.Preset("exec")
	if err := Code([]byte("a\x00b"), &py, "x.py"); err == nil || !strings.Contains(err.Error(), "NUL byte at offset 1") {
		t.Errorf("NUL in source: %v", err)
	}
	if err := Code([]byte("a\x00b"), &ex, "x"); err != nil {
		t.Errorf("NUL in a binary refused: %v", err)
	}
	py.Limits.CodeSize = 3
	if err := Code([]byte("abcd"), &py, "x.py"); err == nil || !strings.Contains(err.Error(), "larger than limits.code_size (3B)") {
		t.Errorf("size: %v", err)
	}
}

func TestProgram(t *testing.T) {
	p, _ := policy.Preset("exec")
	for name, want := range map[string]string{"true": "/usr/bin/true", "/bin/true": "/bin/true", "/usr/bin/env": "/usr/bin/env"} {
		got, err := Program(name, &p)
		if err != nil || got != want {
			t.Errorf("Program(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	for _, name := range []string{"/etc/hostname", "/root/x", "relative/x", "no-such-program-gojail", "/sbin/../etc/passwd"} {
		if got, err := Program(name, &p); err == nil {
			t.Errorf("Program(%q) = %q accepted", name, got)
		}
	}
}

// A program named under a bind must also resolve under one: a link that
// leads out of the binds is refused, one that stays inside is taken.
func TestProgramLinks(t *testing.T) {
	p, _ := policy.Preset("exec")
	bound, outside := t.TempDir(), t.TempDir()
	p.FS.ReadOnly = append(p.FS.ReadOnly, bound)
	prog := filepath.Join(outside, "prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(bound, "plain")
	if err := os.WriteFile(plain, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"out": prog, "in": "/usr/bin/true"} {
		if err := os.Symlink(target, filepath.Join(bound, link)); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := Program(filepath.Join(bound, "in"), &p); err != nil || got != filepath.Join(bound, "in") {
		t.Errorf("a link to /usr/bin/true: %q, %v", got, err)
	}
	for _, name := range []string{filepath.Join(bound, "out"), prog, plain} {
		if got, err := Program(name, &p); err == nil || !strings.Contains(err.Error(), "is not inside the jail") {
			t.Errorf("Program(%q) = %q, %v; want refused", name, got, err)
		}
	}
}

// --stdin: a file, a FIFO (checked without an open, which would wait for
// its writer) or a device; never a directory or a socket.
func TestStdin(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "in")
	fifo := filepath.Join(dir, "fifo")
	sock := filepath.Join(dir, "sock")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, tc := range []struct{ path, err string }{
		{file, ""}, {fifo, ""}, {"/dev/null", ""},
		{dir, "is a directory"}, {sock, "is a socket"}, {filepath.Join(dir, "none"), "no such file"},
	} {
		err := Stdin(tc.path)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Stdin(%s) = %v, want %q", tc.path, err, tc.err)
		}
	}
}

// A CPU quota that is not a number (TOML's nan) is refused like one out of
// range, never taken as no quota.
func TestCPUsNotANumber(t *testing.T) {
	for _, v := range []string{"nan", "-nan", "inf", "-1.0", "1025.0"} {
		path := filepath.Join(t.TempDir(), "p.toml")
		os.WriteFile(path, []byte("base = \"python\"\n[limits]\ncpus = "+v+"\n"), 0o644)
		p, err := policy.Load(path)
		if err != nil {
			t.Fatalf("cpus = %s: %v", v, err)
		}
		if err := Policy(&p); err == nil || !strings.Contains(err.Error(), "limits.cpus is") {
			t.Errorf("cpus = %s: got %v, want limits.cpus refused", v, err)
		}
	}
}

// A work directory in /proc or at a file the jail makes itself failed the
// run as internal_error (its mount point could not be made); a bind of such
// a file replaced the jail's own with the host's.
func TestJailOwnPaths(t *testing.T) {
	for _, tc := range []struct {
		workdir, ro, want string
	}{
		{"/proc/w", "", `run.workdir "/proc/w" is inside /proc, or at a file the jail makes itself`},
		{"/proc/self", "", `run.workdir "/proc/self" is inside /proc`},
		{"/etc/passwd", "", `run.workdir "/etc/passwd" is inside /proc, or at a file the jail makes itself`},
		{"/dev/shm/w", "", `run.workdir "/dev/shm/w" is inside /proc, or at a file the jail makes itself`},
		{"/etc/w", "", ""},
		{"/work", "/etc/passwd", "fs.ro entry /etc/passwd is a file the jail writes itself"},
		{"/work", "/etc/hosts", "fs.ro entry /etc/hosts is a file the jail writes itself"},
		{"/work", "/etc/os-release", ""},
	} {
		p, err := policy.Preset("python")
		if err != nil {
			t.Fatal(err)
		}
		p.Run.Workdir = tc.workdir
		if tc.ro != "" {
			p.FS.ReadOnly = append(p.FS.ReadOnly, tc.ro)
		}
		err = Policy(&p)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("workdir %s, ro %q: %v, want it accepted", tc.workdir, tc.ro, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("workdir %s, ro %q: %v, want %q", tc.workdir, tc.ro, err, tc.want)
		}
	}
}

// A policy's interpreter in /proc, /sys or /dev is refused: /proc/self/exe,
// before pid 2's execve, is gojail itself, which no bind shows the jail.
func TestCommandInKernelInterfaces(t *testing.T) {
	for _, c := range []string{"/proc/self/exe", "/usr/../proc/1/exe", "/dev/fd/3", "/sys/kernel/x", "/proc"} {
		p := policy.Defaults()
		p.Run.Command = []string{c, "{file}"}
		if err := Structure(&p); err == nil || !strings.Contains(err.Error(), "run.command[0] "+strconv.Quote(c)+" is in /") {
			t.Errorf("%s: %v", c, err)
		}
	}
}

// A link in fs.ro is the same link in the jail: an interpreter whose links
// lead into /proc, /sys or /dev is refused (a link to / or to
// /proc/self/exe made gojail itself the program), and so is a program
// named after "--" that does; and so is an entry below a link, which the
// jail's setup would make where the link leads in the jail (a link to
// ../../tmp led out of the root on older kernels; one below /lib failed
// the run).
func TestOwnLinks(t *testing.T) {
	dir := t.TempDir()
	toRoot, toTmp, toExe, chain := filepath.Join(dir, "root"), filepath.Join(dir, "up"), filepath.Join(dir, "exe"), filepath.Join(dir, "a")
	for link, target := range map[string]string{toRoot: "/", toTmp: "../../../../tmp", toExe: "/proc/self/exe", chain: "root"} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ c, via string }{
		{toRoot + "/proc/self/exe", "/proc"}, {toRoot + "/usr/../proc/1/exe", "/proc"}, {toRoot + "/dev/null", "/dev"},
		{toExe, "/proc"}, {chain + "/proc/self/exe", "/proc"},
	} {
		p := policy.Defaults()
		p.FS.ReadOnly = append(p.FS.ReadOnly, toRoot, toExe, chain)
		p.Run.Command = []string{tc.c, "{file}"}
		if err := Structure(&p); err == nil || !strings.Contains(err.Error(), "leads to "+tc.via+" through links") {
			t.Errorf("run.command[0] %s: %v", tc.c, err)
		}
		if got, err := Program(tc.c, &p); err == nil {
			t.Errorf("Program(%s) = %q accepted", tc.c, got)
		}
	}
	p := policy.Defaults()
	p.FS.ReadOnly = append(p.FS.ReadOnly, toRoot)
	p.Run.Command = []string{"/usr/bin/python3", "{file}"}
	if err := Structure(&p); err != nil {
		t.Errorf("a plain interpreter beside the link: %v", err)
	}

	python, _ := policy.Preset("python")
	for _, tc := range []struct {
		entries []string
		want    string
	}{
		{[]string{toTmp, toTmp + "/x"}, "fs.ro entry " + toTmp + "/x is below " + toTmp + ", a link (-> ../../../../tmp) which the jail has as it is"},
		{[]string{"/lib/x86_64-linux-gnu"}, "fs.ro entry /lib/x86_64-linux-gnu is below /lib, a link (-> usr/lib) which the jail has as it is: name /usr/lib/x86_64-linux-gnu instead"},
	} {
		p := python
		p.FS.ReadOnly = append(append([]string(nil), python.FS.ReadOnly...), tc.entries...)
		if err := Policy(&p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.entries, err, tc.want)
		}
	}
}

// A work directory the setup could not make is refused by the check, not
// left to fail the run (internal_error).
func TestWorkdirLength(t *testing.T) {
	for _, w := range []string{"/" + strings.Repeat("a", 300), strings.Repeat("/a", 600)} {
		p := policy.Defaults()
		p.Run.Workdir = w
		if err := Structure(&p); err == nil || !strings.Contains(err.Error(), "run.workdir") {
			t.Errorf("%d bytes: %v", len(w), err)
		}
	}
	p := policy.Defaults()
	p.Run.Workdir = "/" + strings.Repeat("a", 255)
	if err := Structure(&p); err != nil && strings.Contains(err.Error(), "run.workdir") {
		t.Errorf("a name of 255 bytes: %v", err)
	}
}

// The work directory is the jail user's home in its /etc/passwd: a newline
// or a ':' in it wrote lines and fields of their own there (a user of uid
// 0, say). A control character is refused in any path of the jail's, and
// an environment variable given twice, which programs read differently
// (python the first, dash the last).
func TestPathsAndEnvForPasswd(t *testing.T) {
	for _, tc := range []struct {
		edit func(p *policy.Policy)
		want string
	}{
		{func(p *policy.Policy) { p.Run.Workdir = "/w\nevil:x:0:0:evil:/:/bin/sh\nx" }, "run.workdir \"/w\\nevil:x:0:0:evil:/:/bin/sh\\nx\" holds ':'"},
		{func(p *policy.Policy) { p.Run.Workdir = "/w\nx" }, "run.workdir \"/w\\nx\" holds a control character"},
		{func(p *policy.Policy) { p.Run.Workdir = "/w:x" }, "holds ':', which separates /etc/passwd's fields"},
		{func(p *policy.Policy) { p.FS.ReadOnly = append(p.FS.ReadOnly, "/usr/\tx") }, "fs.ro entry \"/usr/\\tx\" holds a control character"},
		{func(p *policy.Policy) { p.Run.Env = append(p.Run.Env, "A=first", "A=second") }, "run.env sets A twice"},
	} {
		p, _ := policy.Preset("python")
		tc.edit(&p)
		if err := Policy(&p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v, want %q", err, tc.want)
		}
	}
	p, _ := policy.Preset("python")
	p.Run.Env = append(p.Run.Env, "A=1", "B=2")
	if err := Policy(&p); err != nil {
		t.Errorf("two variables: %v", err)
	}
}
