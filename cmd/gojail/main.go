// No periodic re-reading of the cgroup's CPU limit: a run lasts seconds,
// and a supervisor makes no system calls it does not need.
//
//go:debug updatemaxprocs=0

// Command gojail runs untrusted code in a jail and reports exactly what
// happened. See README.md and CONTRACT.md.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	// One run allocates little and ends soon: no collection, unless the
	// heap grows past what any run needs (output is capped).
	// One P: the supervisor coordinates and mostly waits in system calls.
	// With a second P idle, the runtime's monitor thread keeps waking (every
	// 20 µs at first) through the first 10 ms of each blocking call before
	// it hands the P off; with one, it hands it off at once and sleeps. On a
	// `python3 -c pass` run: half the context switches, 0.8-1.5 ms less CPU
	// and 0.27 ms less wall time (4 interleaved rounds); /bin/true unchanged.
	runtime.GOMAXPROCS(1)
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(256 << 20)
	app := &cli.App{
		Name:            "gojail",
		Usage:           "run untrusted code in a jail and report exactly what happened",
		Version:         version,
		HideVersion:     true,
		HideHelpCommand: true,
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
	}
	if err := app.Run(os.Args); err != nil {
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
