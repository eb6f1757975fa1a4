// Package early gives a gojail run the jail's init that was cloned before
// the run was read: at the process's entry, before the Go runtime started
// (jail.EntryInit, where the command is linked with jail.EntrySymbol), or
// else from the first package initialisation that can (the jail package
// and what it imports are ready; the command line's and the other
// packages' are not). The init makes its namespaces while the rest of the
// program starts and reads the run.
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
	if e, tried := jail.EntryInit(); tried {
		Init = e
		return
	}
	if jail.WantsEarly(len(os.Args)-1, func(i int) string { return os.Args[i+1] }) {
		Init, _ = jail.StartEarly()
	}
}
