// Package early clones the jail's init of a gojail run as the process
// starts, from the first package initialisation that can (the jail package
// and what it imports are ready; the command line's and the other
// packages' are not): the init makes its namespaces while the rest of the
// program starts and reads the run (jail.StartEarly).
package early

import (
	"os"

	_ "github.com/gojail/gojail/cmd/gojail/internal/oneproc" // one P before anything else, the clone too
	"github.com/gojail/gojail/jail"
)

// Init is the run's init, nil for another command or if it could not be
// made (the run then clones its own, and reports why that failed).
var Init *jail.Early

func init() {
	// This process forks nothing but its jails, from Go, and marks no
	// mapping MADV_DONTFORK of its own.
	jail.LeanClones = true
	if len(os.Args) > 1 && os.Args[1] == "run" && !noRun(os.Args[2:]) {
		Init, _ = jail.StartEarly()
	}
}

// noRun tells, from the raw arguments, a run that will not adopt the init:
// a request for help, or the host's network (which a policy file may ask
// for too; then the run discards it). The init costs such a run its
// namespaces and its wait.
func noRun(args []string) bool {
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case a == "-h" || a == "--help" || a == "-help":
			return true
		case a == "--net=host" || a == "-net=host":
			return true
		case (a == "--net" || a == "-net") && i+1 < len(args) && args[i+1] == "host":
			return true
		}
	}
	return false
}
