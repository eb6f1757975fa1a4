package validate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/policy"
)

// File reads the submitted file and checks it against the policy: it must be
// a readable regular file no larger than limits.code_size, and hold no NUL
// byte unless the policy runs binaries.
func File(path string, p *policy.Policy) ([]byte, error) {
	// Looked at before it is opened: opening a device, or a FIFO that has
	// a writer (which its close would then give SIGPIPE), is not harmless.
	if st, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, unwrapPath(err))
	} else if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	// O_NONBLOCK: a FIFO swapped in meanwhile would wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, unwrapPath(err))
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	// Not a file of the host kernel's (/proc/self/maps would copy this
	// process's memory map into the jail; --stdin refuses them too).
	var fs unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &fs); err == nil {
		if name, ok := kernelFS[int64(fs.Type)]; ok {
			return nil, fmt.Errorf("%s is a file of the host kernel's (%s): give the code as a file of its own", path, name)
		}
	}
	// Read one byte past the limit so a file that grew meanwhile is caught too.
	data, err := io.ReadAll(io.LimitReader(f, int64(p.Limits.CodeSize)+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, unwrapPath(err))
	}
	if err := Code(data, p, path); err != nil {
		return nil, err
	}
	return data, nil
}

func notRegular(path string, mode os.FileMode) error {
	return fmt.Errorf("%s is %s, not a regular file: give the code as a file (or with -c)", path, policy.FileKind(mode))
}

// Code checks submitted code (a file's content or -c CODE) against the policy.
func Code(data []byte, p *policy.Policy, what string) error {
	if int64(len(data)) > int64(p.Limits.CodeSize) {
		return fmt.Errorf("%s is larger than limits.code_size (%s)", what, p.Limits.CodeSize)
	}
	if !p.Run.Binary {
		if i := bytes.IndexByte(data, 0); i >= 0 {
			return fmt.Errorf("%s holds a NUL byte at offset %d: the %s policy takes source text (use --policy exec for a binary)", what, i, p.Name)
		}
	}
	return nil
}

// Stdin checks the file given as the program's standard input. A regular
// file is opened to check it; anything else (a FIFO, a device) only for
// read permission: an open of a FIFO waits for a writer, and its close
// could leave the run's own open waiting for another one.
func Stdin(path string) error {
	if path == "-" { // gojail's own stdin, passed on
		var st unix.Stat_t
		if err := unix.Fstat(0, &st); err != nil {
			return fmt.Errorf("--stdin -: gojail's own stdin: %w", err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			return errors.New("--stdin -: gojail's own stdin is a directory")
		}
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("--stdin %s: %w", path, unwrapPath(err))
	}
	if st.IsDir() {
		return fmt.Errorf("--stdin %s is a directory", path)
	}
	if st.Mode()&os.ModeSocket != 0 {
		return fmt.Errorf("--stdin %s is a socket, which cannot be opened: give a file, a FIFO or a device", path)
	}
	if !st.Mode().IsRegular() {
		if err := unix.Faccessat(unix.AT_FDCWD, path, unix.R_OK, unix.AT_EACCESS); err != nil {
			return fmt.Errorf("--stdin %s: %w", path, err)
		}
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("--stdin %s: %w", path, unwrapPath(err))
	}
	return f.Close()
}

// Program resolves a program named after "--" to its path inside the jail:
// an absolute path, or a name looked up in the policy's PATH. It must exist
// and lie inside one of the policy's read-only binds (the jail sees those
// host paths at the same place).
func Program(name string, p *policy.Policy) (string, error) {
	if name == "" {
		return "", errors.New("no program named")
	}
	var candidates []string
	if strings.ContainsRune(name, '/') {
		if !filepath.IsAbs(name) {
			return "", fmt.Errorf("program %q: give an absolute path or a bare name looked up in the jail's PATH", name)
		}
		candidates = []string{name}
	} else {
		for _, dir := range filepath.SplitList(envValue(p.Run.Env, "PATH")) {
			if filepath.IsAbs(dir) {
				candidates = append(candidates, filepath.Join(dir, name))
			}
		}
	}
	for _, c := range candidates {
		if visible(c, p) {
			return c, nil
		}
	}
	return "", fmt.Errorf("program %q is not inside the jail: it must be an executable file under one of fs.ro (%s)", name, strings.Join(p.FS.ReadOnly, ", "))
}

// visible reports whether the host file c is an executable regular file that
// the jail sees: c lies under one of the binds as named, and what it
// resolves to lies under one of the binds as resolved.
func visible(c string, p *policy.Policy) bool {
	named := false
	for _, b := range p.FS.ReadOnly {
		if under(c, b) {
			named = true
			break
		}
	}
	if !named { // decided without a system call
		return false
	}
	if viaKernel(c, p.FS.ReadOnly) != "" { // a link to /proc/self/exe: gojail itself
		return false
	}
	real, err := filepath.EvalSymlinks(c)
	if err != nil {
		return false
	}
	st, err := os.Stat(real)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return false
	}
	for _, b := range p.FS.ReadOnly {
		if rb, err := filepath.EvalSymlinks(b); err == nil && under(real, rb) {
			// Unless b is a link, which is a link in the jail, not a bind:
			// what it leads to is seen only through the binds.
			if st, err := os.Lstat(b); err == nil && st.Mode()&os.ModeSymlink == 0 {
				return true
			}
		}
	}
	return false
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
