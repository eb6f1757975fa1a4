// GOMAXPROCS from the CPUs alone, not from the cgroup's CPU limit, and no
// periodic re-reading of that limit: a supervisor keeps few goroutines
// busy, a run lasts seconds, and it makes no system calls it does not
// need. With the Makefile's runtime overlay (golang/go#78124),
// containermaxprocs=0 also spares the runtime's reading of
// /proc/self/cgroup and /proc/self/mountinfo as the process starts.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0

// Command gojail runs untrusted code in a jail and reports exactly what
// happened. See README.md and CONTRACT.md.
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	startup "github.com/gojail/gojail/cmd/gojail/internal/early"
	"github.com/gojail/gojail/cmd/gojail/internal/utc"
	"github.com/gojail/gojail/jail"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// early is the jail's init of a run, cloned as gojail starts (package
// early): it makes its namespaces while the command line and the policy
// are read, and the run adopts it; nil once the run has it, or for another
// command.
var early = startup.Init

func main() {
	utc.Restore() // TZ as it was; the zone stays UTC (package utc)
	// One run allocates little and ends soon: no collection, unless the
	// heap grows past what any run needs (output is capped). The scheduler
	// has one P (package oneproc).
	debug.SetGCPercent(-1)
	// Every exit goes through here, also those that never reach a run (a
	// bad flag, a policy that does not load): an init no run took is ended
	// and reaped.
	cli.OsExiter = func(code int) {
		early.Discard()
		jail.Exit(code)
	}
	// The collector comes back past 32 MiB: only a large output limit
	// takes the heap there, and each doubling of its kept bytes would
	// otherwise stay (64 MiB kept held 305 MB).
	debug.SetMemoryLimit(32 << 20)
	app := &cli.App{
		Name:            "gojail",
		Usage:           "run untrusted code in a jail and report exactly what happened",
		Version:         version,
		HideVersion:     true,
		HideHelpCommand: true,
		// One --env is one KEY=VALUE, verbatim: a value may hold commas.
		DisableSliceFlagSeparator: true,
		Commands: []*cli.Command{
			runCommand(),
			batchCommand(),
			policyCommand(),
			{
				Name:  "version",
				Usage: "print gojail's version",
				Action: func(*cli.Context) error {
					fmt.Println("gojail", version)
					return nil
				},
			},
		},
		OnUsageError: usageError,
		// An unknown command: cli's help would say there is no help topic
		// and exit 3.
		CommandNotFound: func(c *cli.Context, name string) {
			where := "gojail"
			if c.Command != nil && c.Command.Name != "" && c.Command.Name != "gojail" {
				where += " " + c.Command.Name // a subcommand of this one
			}
			fmt.Fprintf(os.Stderr, "gojail: no command %q (see %s --help)\n", name, where)
			cli.OsExiter(125)
		},
	}
	err := app.Run(os.Args)
	early.Discard()
	if err != nil {
		if ec, ok := err.(cli.ExitCoder); ok {
			if msg := ec.Error(); msg != "" {
				fmt.Fprintln(os.Stderr, "gojail:", msg)
			}
			os.Exit(ec.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "gojail:", err)
		os.Exit(125)
	}
}

// usageError reports a bad flag or command with exit 125.
func usageError(_ *cli.Context, err error, _ bool) error {
	return cli.Exit(err.Error()+" (see gojail --help)", 125)
}
