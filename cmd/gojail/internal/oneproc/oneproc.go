// Package oneproc gives the Go scheduler one P, from the first package
// initialisation on: the supervisor coordinates and mostly waits in system
// calls. With a second P idle, the runtime's monitor thread keeps waking
// (every 20 µs at first) through the first 10 ms of each blocking call
// before it hands the P off; with one, it hands it off at once and sleeps.
// Set here rather than in main, the change finds little to stop and undo
// (a P that has cached memory, threads started for the packages'
// goroutines), and costs 0.1-0.15 ms less.
package oneproc

import "runtime"

func init() { runtime.GOMAXPROCS(1) }
