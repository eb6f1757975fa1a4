package main

import (
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// Each flag's own Apply defines what cli's Apply would: the same names,
// usage, default and kind, and the same value once parsed.
func TestFlagsApplyAsCli(t *testing.T) {
	flags := append(append([]cli.Flag{cli.HelpFlag}, runCommand().Flags...), batchCommand().Flags...)
	for _, f := range flags {
		var theirs cli.Flag
		var arg string
		switch q := f.(type) {
		case quickString:
			theirs, arg = q.StringFlag, "some value"
		case *quickBool:
			theirs, arg = q.BoolFlag, "true"
		case quickBool:
			theirs, arg = q.BoolFlag, "true"
		case quickSlice:
			// No comma: the app turns cli's splitting at commas off, which a
			// flag alone cannot; the spaces stay only with KeepSpace.
			theirs, arg = q.StringSliceFlag, " A= 1 "
			if _, ok := ourSet(t, f).Lookup(f.Names()[0]).Value.(*verbatim); !ok && q.KeepSpace {
				t.Errorf("--%s keeps spaces, through cli's Apply: its Names runs a regular expression", f.Names()[0])
			}
		case quickInt:
			theirs, arg = q.IntFlag, "7"
		default:
			t.Errorf("flag %v is cli's own: its Names runs a regular expression on every lookup", f.Names())
			continue
		}
		ours, cliSet := ourSet(t, f), flag.NewFlagSet("cli", flag.ContinueOnError)
		cliSet.SetOutput(io.Discard)
		if err := theirs.Apply(cliSet); err != nil {
			t.Fatal(err)
		}
		for _, name := range theirs.Names() {
			a, b := ours.Lookup(name), cliSet.Lookup(name)
			if a == nil || b == nil {
				t.Fatalf("--%s: defined by ours %v, by cli's %v", name, a != nil, b != nil)
			}
			if a.Usage != b.Usage || a.DefValue != b.DefValue || isBool(a) != isBool(b) {
				t.Errorf("--%s: ours %q %q bool %v, cli's %q %q bool %v", name, a.Usage, a.DefValue, isBool(a), b.Usage, b.DefValue, isBool(b))
			}
			if err := ours.Set(name, arg); err != nil {
				t.Fatal(err)
			}
			if err := cliSet.Set(name, arg); err != nil {
				t.Fatal(err)
			}
			if a.Value.String() != b.Value.String() {
				t.Errorf("--%s %q: ours %q, cli's %q", name, arg, a.Value.String(), b.Value.String())
			}
		}
	}
}

// ourSet is the flag set that f's own Apply defines.
func ourSet(t *testing.T, f cli.Flag) *flag.FlagSet {
	set := flag.NewFlagSet("ours", flag.ContinueOnError)
	set.SetOutput(io.Discard)
	if err := f.Apply(set); err != nil {
		t.Fatal(err)
	}
	return set
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// An unknown command is bad input: exit 125, with the name and where to
// look, for the top level and for policy's subcommands alike.
func TestUnknownCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		help string
	}{
		{[]string{"bogus"}, "gojail --help"},
		{[]string{"policy", "bogus"}, "gojail policy --help"},
	} {
		args := tc.args
		var stderr strings.Builder
		cmd := exec.Command(gojailBin, args...)
		cmd.Stderr = &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 125 || !strings.Contains(stderr.String(), `no command "bogus" (see `+tc.help+`)`) {
			t.Errorf("gojail %q: %v, stderr %q; want exit 125 naming the command", args, err, stderr.String())
		}
	}
}

// policy show prints the effective policy; one that run would refuse is
// still shown, with its problems on stderr and exit 1 (as policy check);
// one that cannot be read is exit 125.
func TestPolicyShow(t *testing.T) {
	dir := tempDir(t)
	tests := []struct {
		name, ref    string
		exit         int
		stdout, errs string // prefix of stdout, a piece of stderr
	}{
		{"a preset", "python", 0, "name = \"python\"\n", ""},
		{"a valid file", writeFile(t, dir, "ok.toml", "base = \"python\"\n[limits]\nmemory = \"64MiB\"\n", 0o644), 0, "name = \"ok\"\n", ""},
		{"a file run refuses", writeFile(t, dir, "small.toml", "base = \"python\"\n[limits]\nmemory = \"1KiB\"\n", 0o644), 1, "name = \"small\"\n",
			"limits.memory is 1KiB: it must be between 4MiB and 1024GiB\nthis policy has problems: gojail run refuses it\n"},
		{"a file that cannot be decoded", writeFile(t, dir, "lots.toml", "[limits]\nmemory = \"lots\"\n", 0o644), 125, "", `bad size "lots"`},
	}
	// A pipe with its writer there before it is read (as a shell's <(...)),
	// writing a while later: read to its end.
	fifo := filepath.Join(dir, "piped.toml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(fifo, os.O_RDWR, 0) // a writer, without waiting for a reader
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		w.WriteString("base = \"python\"\n")
		w.Close()
	}()
	tests = append([]struct {
		name, ref    string
		exit         int
		stdout, errs string
	}{{"a pipe with its writer", fifo, 0, "name = \"piped\"\n", ""}}, tests...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(gojailBin, "policy", "show", tc.ref)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			exit := 0
			if err := cmd.Run(); err != nil {
				ee, ok := err.(*exec.ExitError)
				if !ok {
					t.Fatal(err)
				}
				exit = ee.ExitCode()
			}
			if exit != tc.exit || !strings.HasPrefix(stdout.String(), tc.stdout) || (tc.stdout == "") != (stdout.Len() == 0) ||
				!strings.Contains(stderr.String(), tc.errs) || (tc.errs == "") != (stderr.Len() == 0) {
				t.Fatalf("exit %d, want %d\nstdout: %q\nstderr: %q", exit, tc.exit, stdout.String(), stderr.String())
			}
		})
	}
}
