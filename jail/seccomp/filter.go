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
	dir, _ := cacheDir()
	if dir >= 0 {
		defer unix.Close(dir)
		if raw, err := readTrusted(dir, key); err == nil {
			if prog, err := decodeBPF(raw); err == nil {
				return prog, FromCache, fits(prog)
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
	if err := fits(prog); err != nil {
		return nil, "", err
	}
	if dir >= 0 {
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

// cacheDir opens a directory of this user's only: $XDG_CACHE_HOME/gojail/seccomp
// or ~/.cache/gojail/seccomp, the home being the password database's when
// the environment names none (a grader's or a service's clean environment,
// where every run would otherwise start the compiler: 3.5 ms). It returns
// the directory's descriptor and path, or -1 when there is none to trust
// (no cache then): see openTrusted.
func cacheDir() (int, string) {
	base, err := os.UserCacheDir()
	if err != nil {
		home := passwdHome(os.Geteuid())
		if home == "" {
			return -1, ""
		}
		base = filepath.Join(home, ".cache")
	}
	dir := filepath.Join(base, "gojail", "seccomp")
	fd, err := openTrusted(dir)
	if err != nil {
		return -1, ""
	}
	return fd, dir
}

// openTrusted opens the directory path (absolute), making what is missing
// of it (0700), one component at a time from /, following no symbolic
// link: a filter planted in the cache would be loaded into every jail. Each
// directory on the way must belong to root or this user and be writable by
// no one else, unless sticky (/tmp), so that no one else can swap a
// component; the last must be this user's and private.
func openTrusted(path string) (int, error) {
	if !filepath.IsAbs(path) {
		return -1, fmt.Errorf("%s is not absolute", path)
	}
	const flags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Open("/", flags, 0)
	if err != nil {
		return -1, err
	}
	euid := os.Geteuid()
	names := strings.Split(strings.Trim(filepath.Clean(path), "/"), "/")
	for i, name := range names {
		next, err := unix.Openat(fd, name, flags, 0)
		if err == unix.ENOENT {
			if err = unix.Mkdirat(fd, name, 0o700); err == nil || err == unix.EEXIST {
				next, err = unix.Openat(fd, name, flags, 0)
			}
		}
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, err
		}
		last := i == len(names)-1
		owner := int(st.Uid) == euid || (st.Uid == 0 && !last)
		shared := st.Mode&0o022 != 0 && (last || st.Mode&unix.S_ISVTX == 0)
		if !owner || shared {
			unix.Close(fd)
			return -1, fmt.Errorf("%s: /%s belongs to uid %d with mode %#o", path, strings.Join(names[:i+1], "/"), st.Uid, st.Mode&0o7777)
		}
	}
	return fd, nil
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

// cacheHeader begins every cache file, with the key of the spec it was
// compiled from: a file renamed to another spec's key is not that spec's.
const cacheHeader = "gojail-seccomp-cache "

// readTrusted reads the cached filter of key from the directory dir only
// when it is this user's, no one else can write it, and it says it is
// key's; without its header.
func readTrusted(dir int, key string) ([]byte, error) {
	fd, err := unix.Openat(dir, key+".bpf", unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), key+".bpf")
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s.bpf is not a private file of this user", key)
	}
	buf := make([]byte, st.Size)
	if _, err := f.ReadAt(buf, 0); err != nil {
		return nil, err
	}
	head := cacheHeader + key + "\n"
	if !bytes.HasPrefix(buf, []byte(head)) {
		return nil, fmt.Errorf("%s.bpf is not the filter of %s", key, key)
	}
	return buf[len(head):], nil
}

// store writes a compiled filter, with its header, atomically (a temp
// file, then rename), in the directory dir.
func store(dir int, key string, raw []byte) {
	var rnd [8]byte
	if _, err := unix.Getrandom(rnd[:], 0); err != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%x.tmp", key, rnd)
	fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, werr := f.Write(append([]byte(cacheHeader+key+"\n"), raw...))
	if cerr := f.Close(); werr != nil || cerr != nil {
		unix.Unlinkat(dir, tmp, 0)
		return
	}
	if err := unix.Renameat(dir, tmp, dir, key+".bpf"); err != nil {
		unix.Unlinkat(dir, tmp, 0)
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

// fits refuses a filter that, with gojail's own instructions ahead of it
// (WithSetupSend), the kernel would not load (BPF_MAXINSNS).
func fits(prog []unix.SockFilter) error {
	if n := len(prog) + setupSendLen; n > 4096 {
		return &CompileError{fmt.Sprintf("the seccomp filter takes %d instructions, %d of them gojail's own, and the kernel loads at most 4096: fewer rules, or rules with fewer conditions", n, setupSendLen)}
	}
	return nil
}

// setupSendLen is how many instructions WithSetupSend puts ahead.
const setupSendLen = 9

// WithSetupSend puts ahead of prog an allowance for the jail's own send of
// the filter's listener, made under the filter: sendmsg on fd, of the
// native ABI. A policy's rule for sendmsg would otherwise refuse it (an
// unconditional rule overrides libseccomp's conditional ones for the same
// call), and with it every run: the program never started, and the run was
// blamed on it (a kill rule's time_limit). So would log mode's notify
// action, which the listener not yet sent cannot answer.
func WithSetupSend(prog []unix.SockFilter, fd int) []unix.SockFilter {
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		// struct seccomp_data: nr at 0, arch at 4, args[0] at 16 (its low
		// word; little endian) and 20.
		offNr, offArch, offArg0, offArg0Hi = 0, 4, 16, 20
	)
	pre := []unix.SockFilter{
		{Code: ld, K: offArch},
		{Code: jeq, Jf: 7, K: auditArch},
		{Code: ld, K: offNr},
		{Code: jeq, Jf: 5, K: nrSendmsg},
		{Code: ld, K: offArg0},
		{Code: jeq, Jf: 3, K: uint32(fd)},
		{Code: ld, K: offArg0Hi},
		{Code: jeq, Jf: 1, K: 0},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	return append(pre, prog...)
}
