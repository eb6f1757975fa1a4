// Package early clones the jail's init of a gojail run as the process
// starts, from the first package initialisation that can (the jail package
// and what it imports are ready; the command line's and the other
// packages' are not): the init makes its namespaces while the rest of the
// program starts and reads the run (jail.StartEarly).
package early

import (
	"os"

	_ "github.com/gojail/gojail/cmd/gojail/internal/oneproc" // one P first: the clone then copies less
	"github.com/gojail/gojail/jail"
)

// Init is the run's init, nil for another command or if it could not be
// made (the run then clones its own, and reports why that failed).
var Init *jail.Early

func init() {
	// This process forks nothing but its jails, from Go, and marks no
	// mapping MADV_DONTFORK of its own.
	jail.LeanClones = true
	if len(os.Args) > 1 && os.Args[1] == "run" {
		Init, _ = jail.StartEarly()
	}
}
