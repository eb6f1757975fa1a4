package validate

import (
	"os"
	"strings"
	"testing"

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
