package jail_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/gojail/gojail/jail"
	"github.com/gojail/gojail/policy"
)

// A step that fails inside the child comes back as a typed report that the
// verdict names: here one from the init (the submitted file written into the
// work directory) and one from the program's own process (its execve). Both
// are the caller's doing, so invalid_input.
func TestChildFailure(t *testing.T) {
	sh, err := policy.Preset("sh")
	if err != nil {
		t.Fatal(err)
	}
	sh.Limits.WorkSize = 16 << 10
	exec, err := policy.Preset("exec")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    *policy.Policy
		in   jail.Input
		want string
	}{
		{"the init: a file larger than the work directory", &sh, jail.Input{Code: bytes.Repeat([]byte("#"), 70000)},
			"the submitted file does not fit the work directory (limits.work_size 16KiB, limits.inodes 4096): no space left on device"},
		{"pid 2: execve of a program the jail lacks", &exec, jail.Input{Program: "/usr/bin/no-such-program-gojail"},
			"cannot run /usr/bin/no-such-program-gojail inside the jail: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := jail.Run(context.Background(), tc.p, tc.in)
			if r.Status != jail.StatusInvalidInput || r.Error != tc.want {
				t.Fatalf("got %s %q; want invalid_input %q", r.Status, r.Error, tc.want)
			}
		})
	}
}
