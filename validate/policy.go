// Package validate checks a policy and a submission before anything runs, and
// reports every problem at once, each naming what it needs.
package validate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gojail/gojail/policy"
)

// A check looks at one aspect of a policy and returns every problem it sees.
type check func(p *policy.Policy) []error

var policyChecks = []check{
	checkCommand,
	checkRunPaths,
	checkIdentity,
	checkEnv,
	checkLimits,
	checkFS,
	checkNet,
	checkSeccomp,
}

// Structure runs the checks of p that read nothing of the host: its
// command, paths, identity, environment, limits and network (not its binds
// or its seccomp rules, whose names need the filter's tables). The jail
// package runs them itself, for a library caller that did not validate:
// an unchecked run.file could name a path outside the jail's root.
func Structure(p *policy.Policy) error {
	if p == nil {
		return errors.New("no policy")
	}
	var errs []error
	for _, c := range []check{checkCommand, checkRunPaths, checkIdentity, checkEnv, checkLimits, checkNet} {
		errs = append(errs, c(p)...)
	}
	return errors.Join(errs...)
}

// Policy runs every check on p, including that the host paths it binds
// exist, and joins all problems into one error.
func Policy(p *policy.Policy) error {
	var errs []error
	for _, c := range policyChecks {
		errs = append(errs, c(p)...)
	}
	return errors.Join(errs...)
}

func checkCommand(p *policy.Policy) []error {
	if len(p.Run.Command) == 0 {
		return []error{errors.New(`run.command is empty: name the program to run, e.g. ["/usr/bin/python3", "{file}"]`)}
	}
	c := p.Run.Command[0]
	if c != "{file}" && !filepath.IsAbs(c) {
		return []error{fmt.Errorf("run.command[0] %q is not an absolute path: the jail has no PATH lookup for the interpreter", c)}
	}
	// The kernel's interfaces are no programs: /proc/self/exe, before pid
	// 2's execve, is gojail itself, which no bind shows the jail.
	for _, k := range []string{"/proc", "/sys", "/dev"} {
		if cl := filepath.Clean(c); cl == k || strings.HasPrefix(cl, k+"/") {
			return []error{fmt.Errorf("run.command[0] %q is in %s: name a program inside the policy's read-only paths", c, k)}
		}
	}
	// Or there through links, which the jail has as they are.
	if c != "{file}" {
		if k := viaKernel(c, p.FS.ReadOnly); k != "" {
			return []error{fmt.Errorf("run.command[0] %q leads to %s through links: name a program inside the policy's read-only paths", c, k)}
		}
	}
	for i, a := range p.Run.Command {
		if strings.ContainsRune(a, 0) {
			return []error{fmt.Errorf("run.command[%d] holds a NUL byte", i)}
		}
	}
	return nil
}

func checkRunPaths(p *policy.Policy) []error {
	var errs []error
	if !onlyChars(p.Run.File, "._-", 255) || p.Run.File == "." || p.Run.File == ".." {
		errs = append(errs, fmt.Errorf("run.file %q must be a plain file name of letters, digits, '.', '_' or '-'", p.Run.File))
	}
	if strings.ContainsRune(p.Run.Workdir, ':') {
		// The jail's /etc/passwd names it as its user's home.
		errs = append(errs, fmt.Errorf("run.workdir %q holds ':', which separates /etc/passwd's fields (the jail's user's home is the work directory)", p.Run.Workdir))
	} else if err := jailPath("run.workdir", p.Run.Workdir); err != nil {
		errs = append(errs, err)
	} else if reserved(p.Run.Workdir) {
		errs = append(errs, fmt.Errorf("run.workdir %q collides with a directory the jail builds itself (/, /proc, /dev, /tmp, /etc)", p.Run.Workdir))
	} else if under(p.Run.Workdir, "/proc") || MadeByJail(p.Run.Workdir) {
		errs = append(errs, fmt.Errorf("run.workdir %q is inside /proc, or at a file the jail makes itself (%s): choose a directory of its own, such as /work", p.Run.Workdir, strings.Join(madeFiles, ", ")))
	}
	return errs
}

// madeFiles are the files the jail makes itself beside its directories
// (jail/plan.go; TestMadeByJail holds the two lists together).
var madeFiles = []string{"/etc/passwd", "/etc/group", "/etc/hosts",
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
	"/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/shm"}

// MadeByJail reports whether path is, or is inside, one of the files the
// jail makes itself: a work directory there would collide with it, and a
// bind would replace the jail's own (its passwd, group and hosts name the
// jail's user and host, never the host's).
func MadeByJail(path string) bool {
	for _, f := range madeFiles {
		if under(path, f) {
			return true
		}
	}
	return false
}

// OwnFileBind is the error for a read-only bind of path, one of the files
// the jail makes itself (MadeByJail).
func OwnFileBind(path string) error {
	return fmt.Errorf("fs.ro entry %s is a file the jail writes itself (its user and host, never the host's): remove it from the policy", path)
}

func checkIdentity(p *policy.Policy) []error {
	var errs []error
	if h := p.Run.Hostname; !onlyChars(h, "-", 63) || h[0] == '-' {
		errs = append(errs, fmt.Errorf("run.hostname %q is not a host name (letters, digits and '-', at most 63)", p.Run.Hostname))
	}
	if p.Run.UID <= 0 || p.Run.UID > 65533 {
		errs = append(errs, fmt.Errorf("run.uid %d: the program's user inside the jail must be between 1 and 65533 (never root)", p.Run.UID))
	}
	if p.Run.GID <= 0 || p.Run.GID > 65533 {
		errs = append(errs, fmt.Errorf("run.gid %d: the program's group inside the jail must be between 1 and 65533 (never root)", p.Run.GID))
	}
	return errs
}

func checkEnv(p *policy.Policy) []error {
	var errs []error
	seen := map[string]bool{}
	for _, kv := range p.Run.Env {
		k, _, ok := strings.Cut(kv, "=")
		switch {
		case !ok || !onlyChars(k, "_", 4096) || (k[0] >= '0' && k[0] <= '9'):
			errs = append(errs, fmt.Errorf("run.env entry %q is not KEY=VALUE with KEY of letters, digits and '_'", kv))
		case strings.ContainsRune(kv, 0):
			errs = append(errs, fmt.Errorf("run.env entry for %s holds a NUL byte", k))
		case seen[k]:
			// Programs disagree on which of two counts (python took the
			// first, dash the last).
			errs = append(errs, fmt.Errorf("run.env sets %s twice: give it once", k))
		}
		seen[k] = true
	}
	return errs
}

func checkLimits(p *policy.Policy) []error {
	l := &p.Limits
	var errs []error
	between := func(name string, v, lo, hi int64, unit string) {
		if v < lo || v > hi {
			errs = append(errs, fmt.Errorf("limits.%s is %d%s: it must be between %d and %d%s", name, v, unit, lo, hi, unit))
		}
	}
	dur := func(name string, d policy.Duration, lo, hi time.Duration) {
		if d.Std() < lo || d.Std() > hi {
			errs = append(errs, fmt.Errorf("limits.%s is %s: it must be between %s and %s", name, d, lo, hi))
		}
	}
	size := func(name string, s policy.Size, lo, hi policy.Size) {
		if s < lo || s > hi {
			errs = append(errs, fmt.Errorf("limits.%s is %s: it must be between %s and %s", name, s, lo, hi))
		}
	}
	dur("wall_time", l.WallTime, time.Millisecond, 24*time.Hour)
	dur("cpu_time", l.CPUTime, time.Millisecond, 24*time.Hour)
	size("memory", l.Memory, 4<<20, 1<<40)
	between("pids", int64(l.Pids), 1, 1<<20, "")
	size("output", l.Output, 0, 1<<30)
	size("file_size", l.FileSize, 0, 1<<40)
	between("open_files", int64(l.OpenFiles), 8, 1<<20, "")
	size("stack", l.Stack, 64<<10, 1<<30)
	size("code_size", l.CodeSize, 1, 1<<30)
	size("tmp_size", l.TmpSize, 4<<10, 1<<40)
	size("work_size", l.WorkSize, 4<<10, 1<<40)
	between("inodes", int64(l.Inodes), 16, 1<<24, "")
	if !(l.CPUs >= 0 && l.CPUs <= 1024) { // NaN too
		errs = append(errs, fmt.Errorf("limits.cpus is %g: it must be 0 (no quota) or a number of cores up to 1024", l.CPUs))
	} else if l.CPUs > 0 && l.CPUs < 0.01 {
		errs = append(errs, fmt.Errorf("limits.cpus is %g: the smallest quota is 0.01 of a core", l.CPUs))
	}
	if l.OutputAction != policy.OutputTruncate && l.OutputAction != policy.OutputKill {
		errs = append(errs, fmt.Errorf("limits.output_action %q: want %q or %q", l.OutputAction, policy.OutputTruncate, policy.OutputKill))
	}
	return errs
}

func checkFS(p *policy.Policy) []error {
	var errs []error
	seen := map[string]bool{}
	var binds Binds // the mount table read once, for all of them
	for _, src := range p.FS.ReadOnly {
		if err := jailPath("fs.ro entry", src); err != nil {
			errs = append(errs, err)
			continue
		}
		clean := filepath.Clean(src)
		switch {
		case seen[clean]:
			errs = append(errs, fmt.Errorf("fs.ro lists %s twice", clean))
		case clean == "/":
			errs = append(errs, errors.New("fs.ro binds /, the whole host: name the directories the program needs instead"))
		case reserved(clean) || under(clean, "/proc") || under(clean, "/sys") || under(clean, "/dev"):
			errs = append(errs, fmt.Errorf("fs.ro entry %s is inside /proc, /sys or /dev, or a directory the jail builds itself: host kernel interfaces are never bound", clean))
		case MadeByJail(clean):
			errs = append(errs, OwnFileBind(clean))
		case under(clean, "/tmp"):
			errs = append(errs, fmt.Errorf("fs.ro entry %s is inside /tmp, which the jail mounts as its own tmpfs: bind it from another place", clean))
		case under(clean, p.Run.Workdir) || under(p.Run.Workdir, clean):
			errs = append(errs, fmt.Errorf("fs.ro entry %s overlaps the work directory %s", clean, p.Run.Workdir))
		default:
			if _, err := os.Lstat(clean); err != nil {
				errs = append(errs, fmt.Errorf("fs.ro entry %s: %w (remove it from the policy or install what provides it)", clean, unwrapPath(err)))
			} else if Custom(clean) {
				if _, err := binds.HostBind(clean); err != nil {
					errs = append(errs, err)
				}
			}
		}
		seen[clean] = true
	}
	errs = append(errs, belowLinks(p.FS.ReadOnly, seen)...)
	if p.FS.Proc != policy.ProcFull && p.FS.Proc != policy.ProcPid {
		errs = append(errs, fmt.Errorf("fs.proc %q: want %q or %q", p.FS.Proc, policy.ProcFull, policy.ProcPid))
	}
	return errs
}

// viaKernel follows path's links on the host as the jail follows the same
// ones (it has the policy's link entries as they are, and its binds show
// the host's files at the same paths), and names the first place on the
// way in /proc, /sys or /dev, or "": a link to /proc/self/exe made gojail
// itself the program. Only policies with entries of their own are walked
// (a preset's run costs no system call): the system's directories hold no
// such link but root's.
func viaKernel(path string, ro []string) string {
	own := false
	for _, e := range ro {
		own = own || Custom(e)
	}
	if !own {
		return ""
	}
	rest := strings.Split(filepath.Clean(path), "/")
	cur := "/"
	for hops := 0; len(rest) > 0; {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		if under(next, "/proc") || under(next, "/sys") || under(next, "/dev") {
			return next
		}
		target, err := os.Readlink(next)
		if err != nil {
			cur = next // not a link, or not there: the run says so
			continue
		}
		if hops++; hops > 40 {
			return ""
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return ""
}

// belowLinks refuses an entry of fs.ro below another that is a link: the
// jail has the link, made as it is on the host, and would build what is
// below it where the link leads in the jail, not on the host (a link of the
// policy's own to ../../tmp led out of the jail's root on older kernels;
// one below /bin or /lib failed the run, built before /usr was bound).
// entries is the set of ro's entries, cleaned (checkFS's).
func belowLinks(ro []string, entries map[string]bool) []error {
	// Which entries have others below them, found first without a system
	// call (a preset has none), by each entry's parent directories: a
	// policy's 500 binds took 40 ms compared pair by pair.
	clean := make([]string, len(ro))
	for i, e := range ro {
		clean[i] = filepath.Clean(e)
	}
	var below map[string][]string
	for _, e := range clean {
		for d := filepath.Dir(e); d != "/" && d != "."; d = filepath.Dir(d) {
			if entries[d] {
				if below == nil {
					below = map[string][]string{}
				}
				below[d] = append(below[d], e)
			}
		}
	}
	var errs []error
	for _, link := range clean {
		b := below[link]
		if len(b) == 0 {
			continue
		}
		delete(below, link) // an entry given twice: once
		target, err := os.Readlink(link)
		if err != nil {
			continue // not a link
		}
		to := target
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(link), to)
		}
		for _, e := range b {
			errs = append(errs, fmt.Errorf("fs.ro entry %s is below %s, a link (-> %s) which the jail has as it is: name %s instead", e, link, target, filepath.Join(to, strings.TrimPrefix(e, link))))
		}
	}
	return errs
}

func checkNet(p *policy.Policy) []error {
	switch p.Net.Mode {
	case policy.NetNone, policy.NetLoopback, policy.NetHost:
		return nil
	}
	return []error{fmt.Errorf("net.mode %q: want none, loopback or host", p.Net.Mode)}
}

// onlyChars reports whether s is 1 to max letters, digits and bytes of extra.
func onlyChars(s, extra string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// jailPath checks that a path is absolute and clean, with no "..".
func jailPath(what, p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%s %q is not an absolute path", what, p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return fmt.Errorf("%s %q holds \"..\"", what, p)
		}
	}
	if strings.ContainsRune(p, 0) {
		return fmt.Errorf("%s %q holds a NUL byte", what, p)
	}
	if strings.IndexFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return fmt.Errorf("%s %q holds a control character (a newline, say)", what, p)
	}
	// What the jail's setup can make: names of at most NAME_MAX, a path
	// well inside PATH_MAX (it is made relative to the root, and bound).
	if len(p) > 1024 {
		return fmt.Errorf("%s is %d bytes long: at most 1024", what, len(p))
	}
	for _, part := range strings.Split(p, "/") {
		if len(part) > 255 {
			return fmt.Errorf("%s holds a name of %d bytes: at most 255 each", what, len(part))
		}
	}
	return nil
}

// reserved reports whether p is a directory the jail builds itself.
func reserved(p string) bool {
	switch filepath.Clean(p) {
	case "/", "/proc", "/dev", "/tmp", "/etc", "/sys":
		return true
	}
	return false
}

// under reports whether p is dir or inside it.
func under(p, dir string) bool {
	p, dir = filepath.Clean(p), filepath.Clean(dir)
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
