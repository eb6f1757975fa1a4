// Package utc makes the process's local time zone UTC while the packages
// initialise, unless TZ names one: BurntSushi/toml reads the local zone as
// it initialises (time.Now().Zone()), which loads /etc/localtime, 0.05-0.08
// ms of every run before the jail's init can be cloned. gojail shows no
// local times. It is imported by main, and initialised before package time
// (it needs only syscall, and sorts before it); Restore puts the
// environment back.
package utc

import "syscall"

var set bool

func init() {
	if _, ok := syscall.Getenv("TZ"); !ok {
		set = syscall.Setenv("TZ", "") == nil // "": UTC, with no file read
	}
}

// Restore unsets TZ again if this package set it. The local zone stays
// UTC: the time package reads TZ once.
func Restore() {
	if set {
		syscall.Unsetenv("TZ")
		set = false
	}
}
