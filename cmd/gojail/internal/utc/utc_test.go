package utc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A program that imports BurntSushi/toml, as gojail does: with TZ unset its
// zone is UTC, not read from /etc/localtime (that would be "Local"), and TZ
// is unset again after Restore; a TZ given is kept.
func TestZone(t *testing.T) {
	if _, err := os.Stat("/etc/localtime"); err != nil {
		t.Skipf("no /etc/localtime (%v): the zone is UTC either way", err)
	}
	bin := filepath.Join(t.TempDir(), "zone")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/zone").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, c := range []struct{ tz, want string }{{"", "UTC UTC false"}, {"Etc/GMT-3", "Etc/GMT-3 +03 true"}} {
		cmd := exec.Command(bin)
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		if c.tz != "" {
			if _, err := os.Stat("/usr/share/zoneinfo/" + c.tz); err != nil {
				t.Logf("TZ=%s not tried: %v", c.tz, err)
				continue
			}
			cmd.Env = append(cmd.Env, "TZ="+c.tz)
		}
		out, err := cmd.CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != c.want {
			t.Errorf("TZ %q: %q (%v), want %q", c.tz, got, err, c.want)
		}
	}
}
