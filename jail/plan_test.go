package jail

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/policy"
	"github.com/gojail/gojail/validate"
)

// validate's list of the files the jail makes itself, which a policy may
// neither bind over nor use as its work directory, holds every file, link
// and device the plan puts in /etc and /dev.
func TestMadeByJail(t *testing.T) {
	p, err := policy.Preset("python")
	if err != nil {
		t.Fatal(err)
	}
	ops, err := buildMounts(&p, nil)
	if err != nil {
		t.Fatal(err)
	}
	made := map[string]bool{}
	for _, op := range ops {
		path := "/" + unix.BytePtrToString(op.path)
		if (op.kind == opFile || op.kind == opSymlink || op.kind == opBind && op.isFile) && (strings.HasPrefix(path, "/etc/") || strings.HasPrefix(path, "/dev/")) && !slices.Contains(p.FS.ReadOnly, path) {
			made[path] = true
			if !validate.MadeByJail(path) {
				t.Errorf("the jail makes %s, which validate.MadeByJail does not know", path)
			}
		}
	}
	for _, f := range []string{"/etc/passwd", "/etc/group", "/etc/hosts", "/dev/null", "/dev/shm", "/dev/stdout"} {
		if !made[f] {
			t.Errorf("the plan makes no %s (made: %v)", f, made)
		}
	}
	if validate.MadeByJail("/etc/ssl") || validate.MadeByJail("/dev/nullx") || validate.MadeByJail("/work") {
		t.Error("MadeByJail claims a path the jail does not make")
	}
}
