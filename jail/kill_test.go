package jail

import (
	"testing"

	"github.com/gojail/gojail/policy"
)

// A stop that comes after the run's teardown (the watcher of a cancelled
// context racing the end) arms nothing: its SIGKILL a second later would go
// to a closed pidfd's number, perhaps another jail's by then.
func TestKillAfterCloseAll(t *testing.T) {
	p := policy.Defaults()
	s := &supervisor{p: &p, log: func(string, ...any) {}, enforced: map[string]string{}, plan: &childPlan{ctlW: -1}}
	s.closeAll()
	s.kill(killContext)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hardKill != nil || s.killed != "" {
		t.Fatalf("kill after closeAll: timer %v, reason %q", s.hardKill != nil, s.killed)
	}
}
