package jail_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/gojail/gojail/jail"
	"github.com/gojail/gojail/policy"
)

// The library checks what the command line checks before it, where a miss
// would be unsafe or a panic: run.file of "../.." wrote the submitted file
// on the host, outside the jail's root; NUL bytes and an empty command
// panicked; /proc/self/exe ran this process's own executable in the jail;
// a bind of /etc/passwd showed the host's instead of the jail's own.
func TestLibraryRefusesUnchecked(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o777) // writable by the jail's host user, were it reached
	escape := dir + "/escaped"
	for _, tc := range []struct {
		name  string
		edit  func(p *policy.Policy)
		in    jail.Input
		error string
	}{
		{"run.file climbing out", func(p *policy.Policy) { p.Run.File = "../../../../../.." + escape }, jail.Input{Code: []byte("print(1)")}, "run.file"},
		{"no policy", nil, jail.Input{Code: []byte("print(1)")}, "no policy"},
		{"empty command", func(p *policy.Policy) { p.Run.Command = nil }, jail.Input{Code: []byte("print(1)")}, "run.command is empty"},
		{"uid 0", func(p *policy.Policy) { p.Run.UID = 0 }, jail.Input{Code: []byte("print(1)")}, "never root"},
		{"a bind over the jail's /etc/passwd", func(p *policy.Policy) { p.FS.ReadOnly = append(p.FS.ReadOnly, "/etc/passwd") }, jail.Input{Code: []byte("print(1)")}, "a file the jail writes itself"},
		{"NUL in an argument", nil, jail.Input{Code: []byte("print(1)"), Args: []string{"a\x00b"}}, "NUL byte"},
		{"NUL in the command", func(p *policy.Policy) { p.Run.Command = []string{"/usr/bin/python3", "a\x00b"} }, jail.Input{Code: []byte("print(1)")}, "NUL byte"},
		{"/proc/self/exe as the program", nil, jail.Input{Program: "/proc/self/exe"}, "not in /proc or /dev"},
		{"a relative program", nil, jail.Input{Program: "../bin/true"}, "clean absolute path"},
	} {
		p, err := policy.Preset("python")
		if err != nil {
			t.Fatal(err)
		}
		pp := &p
		if tc.name == "no policy" {
			pp = nil
		} else if tc.edit != nil {
			tc.edit(pp)
		}
		r := jail.Run(context.Background(), pp, tc.in)
		if r.Status != jail.StatusInvalidInput || !strings.Contains(r.Error, tc.error) {
			t.Errorf("%s: %s %q, want invalid_input saying %q", tc.name, r.Status, r.Error, tc.error)
		}
		if pp != nil && tc.edit != nil {
			if pj, err := jail.Prepare(context.Background(), pp, nil); err == nil {
				pj.Close()
				t.Errorf("%s: Prepare accepted the policy", tc.name)
			}
		}
	}
	if _, err := os.Stat(escape); err == nil {
		t.Fatalf("%s was written on the host", escape)
	}
}
