package jail

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The keeper removes the directories it was given once the process that
// cloned it has exited, and not before.
func TestKeeperRemovesDirs(t *testing.T) {
	if dir := os.Getenv("GOJAIL_KEEPER_DIR"); dir != "" {
		startKeeper() // holding no descriptor
		exitMu.Lock()
		running := keeperRunning
		if running {
			keeperRemovesDirs([]string{filepath.Join(dir, "b"), filepath.Join(dir, "a")})
		}
		exitMu.Unlock()
		if !running {
			t.Fatal("no keeper")
		}
		time.Sleep(50 * time.Millisecond) // the keeper waits meanwhile
		if _, err := os.Stat(filepath.Join(dir, "b")); err != nil {
			t.Fatalf("removed while this process runs: %v", err)
		}
		os.Exit(0)
	}
	dir := t.TempDir()
	for _, d := range []string{"a", "a/b", "b"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKeeperRemovesDirs$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GOJAIL_KEEPER_DIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// b goes; a, not empty (a/b), stays: rmdir, in order, nothing more.
	for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "b")); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the keeper did not remove its directory after the process exited")
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "b")); err != nil {
		t.Fatalf("a non-empty directory lost its content: %v", err)
	}
}
