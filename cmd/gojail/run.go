package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/jail"
	"github.com/gojail/gojail/limits"
	"github.com/gojail/gojail/policy"
	"github.com/gojail/gojail/validate"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run FILE, -c CODE, or -- PROGRAM in a jail",
		ArgsUsage: "FILE [ARGS...] | -c CODE [ARGS...] | -- PROGRAM [ARGS...]",
		Flags: []cli.Flag{
			stringFlag(&cli.StringFlag{Name: "policy", Usage: "a preset (" + strings.Join(policy.PresetNames(), ", ") + ") or a TOML policy file"}),
			stringFlag(&cli.StringFlag{Name: "c", Usage: "run `CODE` given inline (python unless --policy says otherwise)"}),
			boolFlag(&cli.BoolFlag{Name: "json", Usage: "print one JSON result object instead of the program's output"}),
			stringFlag(&cli.StringFlag{Name: "stdin", Usage: "the program's standard input (default: empty)", TakesFile: true}),
			stringFlag(&cli.StringFlag{Name: "timeout", Usage: "wall-clock limit, e.g. 500ms, 2s"}),
			stringFlag(&cli.StringFlag{Name: "cpu-time", Usage: "CPU-time limit of the whole process tree, e.g. 1s"}),
			stringFlag(&cli.StringFlag{Name: "memory", Usage: "memory limit of the whole tree, e.g. 64MiB"}),
			stringFlag(&cli.StringFlag{Name: "pids", Usage: "most processes and threads alive at once"}),
			stringFlag(&cli.StringFlag{Name: "output-limit", Usage: "bytes kept of each of stdout and stderr, e.g. 64KiB"}),
			stringFlag(&cli.StringFlag{Name: "output-action", Usage: "past the output limit: truncate (keep running, the rest dropped) or kill (output_limit)"}),
			stringFlag(&cli.StringFlag{Name: "stack", Usage: "stack size of each process, e.g. 256MiB"}),
			stringFlag(&cli.StringFlag{Name: "net", Usage: "none, loopback or host"}),
			sliceFlag(&cli.StringSliceFlag{Name: "env", Usage: "add or replace one environment variable, KEY=VALUE (repeatable)", KeepSpace: true}),
			boolFlag(&cli.BoolFlag{Name: "debug", Usage: "log every isolation step to stderr"}),
			boolFlag(&cli.BoolFlag{Name: "seccomp-log", Usage: "record every system call the seccomp policy refuses (in the JSON result's seccomp_log, else on stderr), answering each as the policy would"}),
		},
		OnUsageError: func(c *cli.Context, err error, sub bool) error {
			return finish(c, jail.Failed(jail.StatusInvalidInput, fmt.Errorf("%v (see gojail run --help)", err)), jsonWanted())
		},
		Action: runAction,
	}
}

// jsonWanted tells whether --json was given, for errors found before the
// flags could be parsed.
func jsonWanted() bool {
	for _, a := range os.Args[1:] {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "-json" || a == "--json=true" {
			return true
		}
	}
	return false
}

func runAction(c *cli.Context) error {
	p, in, err := prepare(c)
	if err != nil {
		return finish(c, jail.Failed(jail.StatusInvalidInput, err), c.Bool("json"))
	}
	// SIGINT, SIGTERM and SIGHUP stop the jail and still give a result.
	// They are caught once the program has run for 20 ms (os/signal starts
	// a thread, which a short run need not pay for); before that, one of
	// them kills gojail, PDEATHSIG the jail, and the next run removes its
	// cgroup.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in.Early, early = early, nil // the run's now, adopted or discarded
	// The run's end is left to the exit (jail.Exit), unless the caller
	// is a subreaper that would not reap what is orphaned to it.
	in.Exiting = os.Getenv("GOJAIL_REAP") == ""
	in.Started = func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		go func() { <-sig; cancel() }()
	}
	return finish(c, jail.Run(ctx, p, in), c.Bool("json"))
}

// prepare reads the policy, applies the flags and checks the input; every
// error is the caller's to fix (invalid_input).
func prepare(c *cli.Context) (*policy.Policy, jail.Input, error) {
	var in jail.Input
	args := c.Args().Slice()
	program := afterDashDash(args)
	set := setFlags(c)
	code, hasCode := c.String("c"), set["c"]

	ref := c.String("policy")
	switch {
	// With -c, "--" comes before the code's arguments, so that one may
	// start with '-' (-c CODE -- -v): there is no program to name then.
	case ref != "":
	case hasCode:
		ref = "python"
	case program:
		ref = "exec"
	case len(args) == 0:
		return nil, in, errors.New("nothing to run: give FILE, -c CODE, or -- PROGRAM (see gojail run --help)")
	default:
		name, ok := policy.PresetForFile(args[0])
		if !ok {
			if st, err := os.Stat(args[0]); err == nil && !st.Mode().IsRegular() {
				return nil, in, fmt.Errorf("%s is %s, not a regular file: give the code as a file (or with -c)", args[0], policy.FileKind(st.Mode()))
			}
			return nil, in, fmt.Errorf("cannot tell how to run %s from its extension: pass --policy (one of %s, or a file)", args[0], strings.Join(policy.PresetNames(), ", "))
		}
		ref = name
	}
	p, err := policy.Load(ref)
	if err != nil {
		return nil, in, err
	}
	if err := withFlags(c, set, &p); err != nil {
		return nil, in, err
	}

	switch {
	case hasCode:
		in.Code = []byte(code)
		if err := validate.Code(in.Code, &p, "-c CODE"); err != nil {
			return nil, in, err
		}
		in.Args = args
	case program:
		if len(args) == 0 {
			return nil, in, errors.New("no program named after --")
		}
		if in.Program, err = validate.Program(args[0], &p); err != nil {
			return nil, in, err
		}
		in.Args = args[1:]
	default:
		if len(args) == 0 {
			return nil, in, errors.New("no FILE to run")
		}
		if in.Code, err = validate.File(args[0], &p); err != nil {
			return nil, in, err
		}
		in.Args = args[1:]
	}
	if s := c.String("stdin"); s != "" {
		if err := validate.Stdin(s); err != nil {
			return nil, in, err
		}
		in.Stdin = s
	}
	in.SeccompLog = c.Bool("seccomp-log")
	if c.Bool("debug") {
		start := time.Now()
		in.Log = func(format string, a ...any) {
			fmt.Fprintf(os.Stderr, "gojail: %7.3fms "+format+"\n", append([]any{float64(time.Since(start).Microseconds()) / 1000}, a...)...)
		}
		in.Log("policy %s", p.Name)
	}
	return &p, in, nil
}

// afterDashDash tells whether the positional arguments came after "--":
// urfave/cli hides the marker, so look for it in the raw command line.
func afterDashDash(args []string) bool {
	raw := os.Args
	for i, a := range raw {
		if a == "--" {
			return len(raw)-i-1 == len(args)
		}
	}
	return false
}

// withFlags applies the run flags given to p (applyFlags) and validates the
// result; a refused limit that a flag set is named by the flag too.
func withFlags(c *cli.Context, set map[string]bool, p *policy.Policy) error {
	if err := applyFlags(c, set, p); err != nil {
		return err
	}
	err := validate.Policy(p)
	if err == nil {
		return nil
	}
	msg := err.Error()
	for flag, field := range limitFlags {
		if set[flag] {
			msg = strings.ReplaceAll(msg, field+" is ", "--"+flag+" ("+field+") is ")
		}
	}
	return errors.New(msg)
}

// limitFlags are the flags that set a limit, and the limit.
var limitFlags = map[string]string{
	"timeout": "limits.wall_time", "cpu-time": "limits.cpu_time", "memory": "limits.memory",
	"output-limit": "limits.output", "pids": "limits.pids", "output-action": "limits.output_action", "stack": "limits.stack",
}

// applyFlags lets the run flags given (set, from setFlags) override the
// policy; a bad value names its flag.
func applyFlags(c *cli.Context, set map[string]bool, p *policy.Policy) error {
	var errs []error
	bad := func(flag string, err error) { errs = append(errs, fmt.Errorf("--%s: %w", flag, err)) }
	dur := func(flag string, dst *policy.Duration) {
		if set[flag] {
			d, err := policy.ParseDuration(c.String(flag))
			if err != nil {
				bad(flag, err)
				return
			}
			*dst = d
		}
	}
	size := func(flag string, dst *policy.Size) {
		if set[flag] {
			s, err := policy.ParseSize(c.String(flag))
			if err != nil {
				bad(flag, err)
				return
			}
			*dst = s
		}
	}
	dur("timeout", &p.Limits.WallTime)
	dur("cpu-time", &p.Limits.CPUTime)
	size("memory", &p.Limits.Memory)
	size("output-limit", &p.Limits.Output)
	size("stack", &p.Limits.Stack)
	if set["output-action"] {
		switch a := c.String("output-action"); a {
		case policy.OutputTruncate, policy.OutputKill:
			p.Limits.OutputAction = a
		default:
			bad("output-action", fmt.Errorf("%q: want truncate or kill", a))
		}
	}
	if set["pids"] {
		n, err := strconv.Atoi(c.String("pids"))
		if err != nil || n < 1 {
			bad("pids", fmt.Errorf("%q is not a whole number of processes of at least 1", c.String("pids")))
		} else {
			p.Limits.Pids = n
		}
	}
	if set["net"] {
		switch m := c.String("net"); m {
		case policy.NetNone, policy.NetLoopback, policy.NetHost:
			p.Net.Mode = m
		default:
			bad("net", fmt.Errorf("%q: want none, loopback or host", m))
		}
	}
	for _, kv := range sliceValue(c, "env") {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			bad("env", fmt.Errorf("%q is not KEY=VALUE", kv))
			continue
		}
		p.Run.Env = setEnv(p.Run.Env, k, kv)
	}
	return errors.Join(errs...)
}

// The run's flags, each with the names it was defined with: cli.Flag's
// Names runs a regular expression over every name, and cli calls it for
// every flag on every lookup (each IsSet, each flag's action check) and in
// its Apply, which every gojail would pay at start (0.04 ms). Apply here
// defines the same flag.FlagSet entries as cli's, from those names; a flag
// that takes an environment variable, a file or a destination, which cli's
// Apply handles, is left to it.
type (
	quickString struct {
		*cli.StringFlag
		names []string
	}
	quickBool struct {
		*cli.BoolFlag
		names []string
	}
	quickSlice struct {
		*cli.StringSliceFlag
		names []string
	}
	quickInt struct {
		*cli.IntFlag
		names []string
	}
)

func stringFlag(f *cli.StringFlag) cli.Flag {
	return quickString{f, append([]string{f.Name}, f.Aliases...)}
}
func boolFlag(f *cli.BoolFlag) cli.Flag { return quickBool{f, append([]string{f.Name}, f.Aliases...)} }
func sliceFlag(f *cli.StringSliceFlag) cli.Flag {
	return quickSlice{f, append([]string{f.Name}, f.Aliases...)}
}
func intFlag(f *cli.IntFlag) cli.Flag { return quickInt{f, append([]string{f.Name}, f.Aliases...)} }

// cli's help flag, as it defines it, with the names it was defined with;
// a pointer, as cli compares flags with == (two quickBool values cannot be).
func init() {
	cli.HelpFlag = &quickBool{&cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show help", DisableDefaultText: true}, []string{"help", "h"}}
}

func (f quickString) Apply(set *flag.FlagSet) error {
	if len(f.EnvVars) > 0 || f.FilePath != "" || f.Destination != nil {
		return f.StringFlag.Apply(set)
	}
	for _, n := range f.names {
		set.String(n, f.Value, f.Usage)
	}
	return nil
}

func (f quickBool) Apply(set *flag.FlagSet) error {
	if len(f.EnvVars) > 0 || f.FilePath != "" || f.Destination != nil || f.Count != nil {
		return f.BoolFlag.Apply(set)
	}
	for _, n := range f.names {
		set.Bool(n, f.Value, f.Usage)
	}
	return nil
}

// Apply gives every name one value, as cli's does; a copy of the defaults,
// which the first value given replaces.
func (f quickSlice) Apply(set *flag.FlagSet) error {
	if len(f.EnvVars) > 0 || f.FilePath != "" || f.Destination != nil {
		return f.StringSliceFlag.Apply(set)
	}
	if f.KeepSpace {
		v := &verbatim{}
		if f.Value != nil {
			v.values = f.Value.Value()
		}
		for _, n := range f.names {
			set.Var(v, n, f.Usage)
		}
		return nil
	}
	v := cli.NewStringSlice()
	if f.Value != nil {
		v = cli.NewStringSlice(f.Value.Value()...)
	}
	for _, n := range f.names {
		set.Var(v, n, f.Usage)
	}
	return nil
}

func (f quickInt) Apply(set *flag.FlagSet) error {
	if len(f.EnvVars) > 0 || f.FilePath != "" || f.Destination != nil {
		return f.IntFlag.Apply(set)
	}
	for _, n := range f.names {
		set.Int(n, f.Value, f.Usage)
	}
	return nil
}

// verbatim is a KeepSpace slice flag's value: each value as given, neither
// split at commas (the app disables the separator) nor trimmed, as cli's
// own would hold it; the first value given replaces the defaults. cli's
// value has its keepSpace set only by cli's Apply, which asks for the
// names (36 KB allocated by the regular expression's matcher, on every run
// that has the flag).
type verbatim struct {
	values []string
	given  bool
}

func (v *verbatim) Set(s string) error {
	if !v.given {
		v.values, v.given = nil, true
	}
	v.values = append(v.values, s)
	return nil
}

func (v *verbatim) String() string { return fmt.Sprintf("%s", v.values) }
func (v *verbatim) Get() any       { return v.values }

// sliceValue is a slice flag's values, whichever Apply defined it.
func sliceValue(c *cli.Context, name string) []string {
	if v, ok := c.Value(name).([]string); ok {
		return v
	}
	return c.StringSlice(name)
}

func (f quickString) Names() []string { return f.names }
func (f quickBool) Names() []string   { return f.names }
func (f quickSlice) Names() []string  { return f.names }
func (f quickInt) Names() []string    { return f.names }

// setFlags names the flags given on the command line, read once: cli's
// IsSet looks through every flag's names (a regular expression each) on
// every call.
func setFlags(c *cli.Context) map[string]bool {
	set := map[string]bool{}
	for _, n := range c.LocalFlagNames() {
		set[n] = true
	}
	return set
}

func setEnv(env []string, key, kv string) []string {
	out := env[:0:0]
	for _, e := range env {
		if k, _, _ := strings.Cut(e, "="); k != key {
			out = append(out, e)
		}
	}
	return append(out, kv)
}

// finish prints the result and exits with its code.
func finish(c *cli.Context, r *jail.Result, asJSON bool) error {
	if asJSON {
		if err := r.WriteJSON(quietOut{1, os.Stdout}); err != nil {
			return cli.Exit("write result: "+err.Error(), 125)
		}
		logOwnPeak(c)
	} else {
		writeOut(1, os.Stdout, r.Stdout)
		writeOut(2, os.Stderr, r.Stderr)
		for _, e := range r.SeccompLog {
			fmt.Fprintf(os.Stderr, "gojail: seccomp: %s: %s (%s), %d times\n", e.Syscall, e.Action, e.Rule, e.Count)
		}
		if r.StdoutTruncated || r.StderrTruncated {
			fmt.Fprintf(os.Stderr, "gojail: output truncated (stdout %d bytes, stderr %d bytes written)\n", r.StdoutBytes, r.StderrBytes)
		}
		switch r.Status {
		case jail.StatusOK, jail.StatusRuntimeError:
		default:
			msg := r.Error
			if msg == "" && r.Signal != "" {
				msg = "killed by " + r.Signal
			}
			fmt.Fprintf(os.Stderr, "gojail: %s: %s\n", r.Status, msg)
		}
		logOwnPeak(c)
	}
	return cli.Exit("", r.ProcessExitCode())
}

// quietOut writes to f, gojail's stdout or stderr, descriptor fd. What
// the descriptor takes at once without blocking (rawRoom, asked on each
// write) is written raw, as jail.Exit's caller should write it (see the
// jail package's quiet.go); the rest, or all of it after an error (EAGAIN
// from a non-blocking descriptor, EPIPE), goes through f, which waits in
// the poller or reports the error as it would.
type quietOut struct {
	fd uintptr
	f  *os.File
}

func (w quietOut) Write(b []byte) (int, error) {
	n, room := 0, rawRoom(w.fd)
	for n < len(b) && room > 0 {
		r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, w.fd, uintptr(unsafe.Pointer(&b[n])), uintptr(min(len(b)-n, room)))
		if e == syscall.EINTR {
			continue
		}
		if e != 0 || r == 0 {
			break
		}
		n, room = n+int(r), room-int(r)
	}
	if n == len(b) {
		return n, nil
	}
	m, err := w.f.Write(b[n:])
	return n + m, err
}

// writeOut writes s through quietOut; nothing for an empty s.
func writeOut(fd uintptr, f *os.File, s string) {
	if s != "" {
		quietOut{fd, f}.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
	}
}

// rawRoom is how much a write to fd takes without blocking: anything for a
// regular file or /dev/null; for an empty pipe, PIPE_BUF bytes (a pipe in
// packet mode takes one write a buffer); nothing for the rest (a terminal,
// a socket, a pipe that holds bytes), or if it cannot be told.
func rawRoom(fd uintptr) int {
	var st syscall.Stat_t
	if _, _, e := syscall.RawSyscall(syscall.SYS_FSTAT, fd, uintptr(unsafe.Pointer(&st)), 0); e != 0 {
		return 0
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return math.MaxInt
	case syscall.S_IFCHR:
		if st.Rdev == unix.Mkdev(1, 3) { // /dev/null
			return math.MaxInt
		}
	case syscall.S_IFIFO:
		// One that holds bytes may have no free buffer however few they
		// are (it keeps a page per write, or per packet).
		var used int32
		if _, _, e := syscall.RawSyscall(syscall.SYS_IOCTL, fd, unix.TIOCINQ, uintptr(unsafe.Pointer(&used))); e != 0 || used != 0 {
			return 0
		}
		return 4096 // PIPE_BUF: less than any pipe's capacity
	}
	return 0
}

// logOwnPeak says, under --debug, the most memory this process has had
// resident: VmHWM, its own. getrusage's figure also counts the process it
// was before its execve (a large caller's copy, for a child it forked).
func logOwnPeak(c *cli.Context) {
	if !c.Bool("debug") {
		return
	}
	b, err := limits.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Fprintf(os.Stderr, "gojail: the supervisor's own peak resident memory: %s\n", strings.TrimSpace(v))
		}
	}
}
