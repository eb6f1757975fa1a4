package policy

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/BurntSushi/toml"
)

//go:embed presets/*.toml
var presetFS embed.FS

// PresetNames lists the built-in presets.
func PresetNames() []string {
	entries, _ := presetFS.ReadDir("presets")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".toml"))
	}
	sort.Strings(names)
	return names
}

// PresetSource returns the TOML text of a built-in preset.
func PresetSource(name string) ([]byte, bool) {
	b, err := presetFS.ReadFile("presets/" + name + ".toml")
	return b, err == nil
}

// Preset returns a built-in preset with the defaults filled in: built by
// presets_gen.go, as its TOML file decodes (TestPresetsGenerated).
func Preset(name string) (Policy, error) {
	if build, ok := presetBuilders[name]; ok {
		return build(), nil
	}
	return Policy{}, fmt.Errorf("unknown preset %q: the built-in presets are %s", name, strings.Join(PresetNames(), ", "))
}

// PresetForFile picks the preset whose extensions include FILE's extension.
func PresetForFile(file string) (string, bool) {
	ext := strings.ToLower(filepath.Ext(file))
	if ext == "" {
		return "", false
	}
	for _, name := range PresetNames() {
		p, err := Preset(name)
		if err != nil {
			continue
		}
		for _, e := range p.Extensions {
			if e == ext {
				return name, true
			}
		}
	}
	return "", false
}

// Load returns a preset when ref names one, else the policy in the file ref.
func Load(ref string) (Policy, error) {
	if _, ok := PresetSource(ref); ok && !strings.ContainsRune(ref, '/') {
		return Preset(ref)
	}
	data, err := readFile(ref)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !strings.ContainsAny(ref, "/.") {
			return Policy{}, fmt.Errorf("policy %q is neither a built-in preset (%s) nor a file", ref, strings.Join(PresetNames(), ", "))
		}
		return Policy{}, fmt.Errorf("read policy: %w", err)
	}
	return Decode(data, ref)
}

// maxFile is the largest policy file read: a policy of 500 binds is 20 KB.
// fifoWait bounds the wait for a pipe's writer.
const (
	maxFile  = 1 << 20
	fifoWait = 10 * time.Second
)

// readFile reads a policy file of at most maxFile bytes: a regular file,
// or a pipe (a shell's <(...)), read for fifoWait at most. It is opened
// without blocking, so that a FIFO with no writer is not waited for, and a
// device such as /dev/zero is refused, not read without end.
func readFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch mode := st.Mode(); {
	case mode&os.ModeNamedPipe != 0:
		f.SetReadDeadline(time.Now().Add(fifoWait))
	case !mode.IsRegular():
		return nil, fmt.Errorf("%s is %s, not a regular file: give a TOML file", path, FileKind(mode))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("%s is a pipe that gave no end of a policy in %s", path, fifoWait)
	case err == nil && len(data) == 0 && st.Mode()&os.ModeNamedPipe != 0:
		err = fmt.Errorf("%s is a pipe that gave nothing (no writer): give a TOML file", path)
	}
	if err == nil && len(data) > maxFile {
		err = fmt.Errorf("%s is over %d KiB: a policy is a small TOML file", path, maxFile>>10)
	}
	return data, err
}

// Decode reads a policy file strictly: an unknown key or a bad value is an
// error naming the key and its line. The policy starts from the defaults, or
// from the preset its "base" key names.
func Decode(data []byte, source string) (Policy, error) {
	var head struct {
		Base string `toml:"base"`
	}
	start := Defaults()
	// A first, lenient pass reads only "base"; the strict pass follows.
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&head); err == nil && head.Base != "" {
		base, err := Preset(head.Base)
		if err != nil {
			return Policy{}, &DecodeError{Source: source, Line: keyLine(data, toml.Key{"base"}), Key: "base", Msg: err.Error()}
		}
		start = base
		start.Name = ""
	}
	p, err := decode(data, source, start)
	if err != nil {
		return Policy{}, err
	}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(source), ".toml")
	}
	return p, nil
}

func decode(data []byte, source string, start Policy) (Policy, error) {
	p := start
	// Lists replace the base's lists rather than append to them.
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&p)
	if err != nil {
		var de *DecodeError
		var pe toml.ParseError
		if errors.As(err, &pe) {
			de = &DecodeError{Source: source, Line: pe.Position.Line, Key: pe.LastKey, Msg: pe.Message}
		} else if m := regexp.MustCompile(typeErrPattern).FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			de = &DecodeError{Source: source, Line: line, Key: m[2], Msg: m[3]}
		}
		if de != nil {
			// The decoder stops at a bad value: the unknown keys, which it
			// would have named after, are found by a lenient reading (none
			// when the file is no TOML at all).
			errs := append(unknownKeys(data, source), de)
			slices.SortStableFunc(errs, func(a, b error) int { return a.(*DecodeError).Line - b.(*DecodeError).Line })
			if len(errs) == 1 {
				return Policy{}, de
			}
			return Policy{}, errors.Join(errs...)
		}
		return Policy{}, &DecodeError{Source: source, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
	}
	var errs []error
	reported := map[string]bool{}
	for _, k := range md.Undecoded() {
		if reported[strings.Join(k[:len(k)-1], ".")] {
			continue // inside a table already reported as unknown
		}
		reported[k.String()] = true
		errs = append(errs, &DecodeError{Source: source, Line: keyLine(data, k), Key: k.String(),
			Msg: "unknown key" + knownKeysHint(k)})
	}
	if len(errs) > 0 {
		return Policy{}, errors.Join(errs...)
	}
	return p, nil
}

// typeErrPattern reads the decoder's type errors, which are not ParseErrors:
// toml: line 2 (last key "run.command"): incompatible types: ...
// (compiled only on that error path: start-up time matters to every run).
const typeErrPattern = `^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`

// DecodeError is a problem in a policy file, with the line it is on.
type DecodeError struct {
	Source string
	Line   int
	Key    string
	Msg    string
}

func (e *DecodeError) Error() string {
	var b strings.Builder
	b.WriteString(e.Source)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": %q", e.Key)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// sections are the keys valid in each table of a policy ([a] and [[a.b]]
// for the tables below it).
var sections = map[string][]string{
	"":                   {"name", "base", "description", "extensions", "[run]", "[limits]", "[fs]", "[net]", "[seccomp]"},
	"seccomp":            {"profile", "default_action", "default_errno", "[[seccomp.rules]]"},
	"seccomp.rules":      {"syscalls", "action", "errno", "args"},
	"seccomp.rules.args": {"index", "op", "value", "mask"},
	"run":                {"command", "file", "binary", "env", "workdir", "hostname", "uid", "gid"},
	"limits":             {"wall_time", "cpu_time", "memory", "pids", "cpus", "rlimit_as", "output", "output_action", "file_size", "open_files", "stack", "code_size", "tmp_size", "work_size", "inodes"},
	"fs":                 {"ro", "proc"},
	"net":                {"mode"},
}

// unknownKeys reads data leniently and names each key no table of a policy
// has, as the strict decoder would have.
func unknownKeys(data []byte, source string) []error {
	var doc map[string]any
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil
	}
	var errs []error
	var walk func(path toml.Key, m map[string]any)
	walk = func(path toml.Key, m map[string]any) {
		parent := strings.Join(path, ".")
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			key := append(append(toml.Key{}, path...), k)
			full := strings.Join(key, ".")
			if !slices.Contains(sections[parent], k) && !slices.Contains(sections[parent], "["+full+"]") && !slices.Contains(sections[parent], "[["+full+"]]") {
				errs = append(errs, &DecodeError{Source: source, Line: keyLine(data, key), Key: full, Msg: "unknown key" + knownKeysHint(key)})
				continue
			}
			switch v := m[k].(type) {
			case map[string]any:
				walk(key, v)
			case []map[string]any:
				for _, t := range v {
					walk(key, t)
				}
			case []any:
				for _, t := range v {
					if t, ok := t.(map[string]any); ok {
						walk(key, t)
					}
				}
			}
		}
	}
	walk(nil, doc)
	return errs
}

// knownKeysHint names the keys that are valid where k was found.
func knownKeysHint(k toml.Key) string {
	parent := strings.Join(k[:len(k)-1], ".")
	if keys, ok := sections[parent]; ok {
		where := "at the top level"
		if parent != "" {
			where = "in [" + parent + "]"
		}
		return fmt.Sprintf(" (valid %s: %s)", where, strings.Join(keys, ", "))
	}
	return ""
}

// keyLine finds the line on which key is set or its table opens; 0 if not
// found. It reads the file line by line, as the TOML grammar allows keys only
// at the start of a line.
func keyLine(data []byte, key toml.Key) int {
	want := strings.Join(key, ".")
	var table []string
	for i, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' {
			continue
		}
		if t[0] == '[' {
			name := strings.Trim(strings.SplitN(t, "]", 2)[0], "[ ")
			table = splitKey(name)
			if strings.Join(table, ".") == want {
				return i + 1
			}
			continue
		}
		eq := strings.IndexByte(t, '=')
		if eq < 0 {
			continue
		}
		full := append(append([]string{}, table...), splitKey(t[:eq])...)
		if j := strings.Join(full, "."); j == want || strings.HasPrefix(want, j+".") || strings.HasPrefix(j, want+".") {
			return i + 1
		}
	}
	return 0
}

func splitKey(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ".") {
		out = append(out, strings.Trim(strings.TrimSpace(p), `"'`))
	}
	return out
}

// Encode prints the policy as TOML, every value filled in.
func Encode(p Policy) ([]byte, error) {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// FileKind names what a file that is not a regular one is, for messages.
func FileKind(mode os.FileMode) string {
	switch {
	case mode.IsDir():
		return "a directory"
	case mode&os.ModeNamedPipe != 0:
		return "a FIFO"
	case mode&os.ModeDevice != 0:
		return "a device"
	case mode&os.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}
