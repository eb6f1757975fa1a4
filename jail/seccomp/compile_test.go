//go:build cgo

package seccomp

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gojail/gojail/policy"
)

// The embedded default profile is what libseccomp compiles from the rules
// in profile.go today: run `make generate` when this fails.
func TestEmbeddedDefault(t *testing.T) {
	spec := mustSpec(t)
	raw, err := CompileBytes(spec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, defaultBPF) || spec.Key() != strings.TrimSpace(defaultKey) {
		t.Fatal("the embedded default profile is stale: run `make generate`")
	}
	for nr := 0; nr < 1024; nr++ {
		name := ""
		if nr < len(syscallNames) {
			name = syscallNames[nr]
		}
		if got, _ := SyscallName(nr); got != name {
			t.Fatalf("name table: %d is %q, libseccomp says %q: run `make generate`", nr, name, got)
		}
	}
}

func TestCompilePolicyRules(t *testing.T) {
	s := policy.Defaults().Seccomp
	s.Rules = []policy.SeccompRule{
		{Syscalls: []string{"ptrace", "mount"}, Action: policy.ActKill},
		{Syscalls: []string{"getpid"}, Action: policy.ActErrno, Errno: "EACCES"},
		{Syscalls: []string{"write"}, Action: policy.ActErrno, Errno: "EIO", Args: []policy.SeccompArg{{Index: 0, Op: ">", Value: 100}}},
		{Syscalls: []string{"kill"}, Action: policy.ActTrap},
		{Syscalls: []string{"uname"}, Action: policy.ActLog},
	}
	spec, err := SpecOf(s)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		nr   int
		args []uint64
		want uint32
	}{
		{"ptrace: kill (the policy replaces the profile's EPERM)", 101, nil, retNotify},
		{"mount: kill", 165, nil, retNotify},
		{"getpid: EACCES", 39, nil, retErrno | 13},
		{"write to fd 1", 1, []uint64{1}, retAllow},
		{"write to fd 101: EIO", 1, []uint64{101}, retErrno | 5},
		{"kill: trap", 62, nil, retTrap},
		{"uname: log", 63, nil, retLog},
		{"chroot keeps the profile's EPERM", 161, nil, retErrno | 1},
	}
	for _, tc := range tests {
		if got := run(t, prog, archX8664, tc.nr, tc.args...); got != tc.want {
			t.Errorf("%s: got %#x, want %#x", tc.name, got, tc.want)
		}
	}
}

// A filter that refuses by default still lets the jail finish its setup:
// sendmsg on the setup descriptor only, and execve.
func TestDefaultDenyAllowsTheSetup(t *testing.T) {
	spec := Spec{DefaultAction: policy.ActKill, SetupFd: 65535, Rules: []policy.SeccompRule{{Syscalls: []string{"write", "exit_group"}, Action: policy.ActAllow}}}
	prog, err := Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		nr   int
		args []uint64
		want uint32
	}{
		{"sendmsg on the setup fd", 46, []uint64{65535}, retAllow},
		{"sendmsg on another fd", 46, []uint64{3}, retNotify},
		{"execve", 59, nil, retAllow},
		{"write", 1, nil, retAllow},
		{"open", 2, nil, retNotify},
	} {
		if got := run(t, prog, archX8664, tc.nr, tc.args...); got != tc.want {
			t.Errorf("%s: got %#x, want %#x", tc.name, got, tc.want)
		}
	}
}

func TestCompileErrorsNameTheRule(t *testing.T) {
	spec := Spec{DefaultAction: policy.ActAllow, Rules: []policy.SeccompRule{
		{Syscalls: []string{"getpid"}, Action: policy.ActKill},
		{Syscalls: []string{"not_a_syscall"}, Action: policy.ActKill},
		{Syscalls: []string{"read"}, Action: policy.ActKill, Args: []policy.SeccompArg{{Index: 0, Op: "~", Value: 1}}},
	}}
	_, err := Compile(spec)
	if err == nil {
		t.Fatal("compiled")
	}
	for _, want := range []string{`seccomp rule 2 ([not_a_syscall]): unknown system call "not_a_syscall"`, `seccomp rule 3 ([read]): unknown comparison "~"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "rule 1") {
		t.Errorf("rule 1 is fine: %v", err)
	}
}
