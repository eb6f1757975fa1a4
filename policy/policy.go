// Package policy holds a jail's policy as plain data: what runs, with which
// limits, which host paths it sees and what network it gets. Policies are TOML,
// decoded strictly; built-in presets are TOML files embedded in the binary.
package policy

// Policy is everything gojail needs to know to run one program.
type Policy struct {
	// Name is the preset or file the policy came from; informational.
	Name string `toml:"name"`
	// Base names a preset whose values this policy starts from.
	Base string `toml:"base,omitempty"`
	// Description says in words what the policy is for.
	Description string `toml:"description,omitempty"`
	// Extensions are the file extensions (".py") that pick this preset.
	Extensions []string `toml:"extensions,omitempty"`

	Run     Run     `toml:"run"`
	Limits  Limits  `toml:"limits"`
	FS      FS      `toml:"fs"`
	Net     Net     `toml:"net"`
	Seccomp Seccomp `toml:"seccomp"`
}

// Run says what is executed inside the jail and how.
type Run struct {
	// Command is the argv run for a submitted file. "{file}" is replaced by
	// the file's path inside the jail; the user's ARGS follow.
	Command []string `toml:"command"`
	// File is the name the submitted file gets in the work directory.
	File string `toml:"file"`
	// Binary marks the submitted file as an executable (the exec preset):
	// NUL bytes are allowed and the file is made executable.
	Binary bool `toml:"binary"`
	// Env is the program's whole environment, as KEY=VALUE.
	Env []string `toml:"env"`
	// Workdir is the writable tmpfs the file is copied into; the program's
	// working directory.
	Workdir string `toml:"workdir"`
	// Hostname is the jail's host name (its own UTS namespace).
	Hostname string `toml:"hostname"`
	// UID and GID are the program's user and group inside the jail; never 0.
	UID int `toml:"uid"`
	GID int `toml:"gid"`
}

// Limits caps what one run may use.
type Limits struct {
	WallTime Duration `toml:"wall_time"` // wall-clock time from start to exit
	CPUTime  Duration `toml:"cpu_time"`  // CPU time (user+system) of the whole tree
	Memory   Size     `toml:"memory"`    // memory of the whole tree
	Pids     int      `toml:"pids"`      // processes and threads alive at once
	// CPUs is a CPU quota in cores (1.5 = one and a half); 0 for none.
	CPUs float64 `toml:"cpus"`
	// RlimitAS says whether, when no cgroup can be used (rootless without a
	// delegated cgroup), memory is capped by an address-space rlimit
	// instead. Runtimes that reserve address space up front (node: about
	// 1 GiB) must turn it off, and then run without a memory limit.
	RlimitAS bool `toml:"rlimit_as"`
	// Output is the number of bytes kept of each of stdout and stderr.
	Output Size `toml:"output"`
	// OutputAction is what happens past Output: "truncate" keeps the program
	// running and drops the excess; "kill" stops it with status output_limit.
	OutputAction string `toml:"output_action"`
	FileSize     Size   `toml:"file_size"`  // largest file the program may write (RLIMIT_FSIZE)
	OpenFiles    int    `toml:"open_files"` // open file descriptors per process (RLIMIT_NOFILE)
	Stack        Size   `toml:"stack"`      // stack size per process (RLIMIT_STACK)
	CodeSize     Size   `toml:"code_size"`  // largest submitted file
	TmpSize      Size   `toml:"tmp_size"`   // size of the /tmp tmpfs (and of /dev/shm)
	WorkSize     Size   `toml:"work_size"`  // size of the work directory's tmpfs
	Inodes       int    `toml:"inodes"`     // files and directories per tmpfs
}

// FS says which host paths the jail sees.
type FS struct {
	// ReadOnly are host paths bound read-only at the same place in the jail.
	// A path that is a symbolic link on the host (/bin -> usr/bin) becomes
	// the same link in the jail.
	ReadOnly []string `toml:"ro"`
	// Proc is "full" for an ordinary /proc of the jail's own pid namespace,
	// or "pid" for only the process directories (proc's subset=pid).
	Proc string `toml:"proc"`
}

// Net says what network the jail has.
type Net struct {
	// Mode is "none" (a network namespace with no interface up), "loopback"
	// (a private loopback only) or "host" (the host's network, no isolation).
	Mode string `toml:"mode"`
}

// Output actions.
const (
	OutputTruncate = "truncate"
	OutputKill     = "kill"
)

// Network modes.
const (
	NetNone     = "none"
	NetLoopback = "loopback"
	NetHost     = "host"
)

// Proc modes.
const (
	ProcFull = "full"
	ProcPid  = "pid"
)

// Seccomp is the policy's system-call filter: a base profile, the action
// for calls no rule names, and rules. Rules of the policy replace the
// profile's rules for the system calls they name.
type Seccomp struct {
	// Profile is the base: "default" (refuses what a program has no need
	// for, kills foreign ABIs) or "none" (no rules of its own).
	Profile string `toml:"profile"`
	// DefaultAction applies to calls no rule names: allow, errno, kill,
	// log or trap; with errno, DefaultErrno says which.
	DefaultAction string        `toml:"default_action"`
	DefaultErrno  Errno         `toml:"default_errno,omitempty"`
	Rules         []SeccompRule `toml:"rules,omitempty"`
}

// SeccompRule gives one action to some system calls, when every condition
// on their arguments holds.
type SeccompRule struct {
	Syscalls []string `toml:"syscalls"`
	// Action is allow, errno, kill (status syscall_blocked, naming the
	// call), log (allowed, and logged by the kernel's audit) or trap (SIGSYS).
	Action string `toml:"action"`
	// Errno is the error an errno action returns: a name ("EPERM") or number.
	Errno Errno        `toml:"errno,omitempty"`
	Args  []SeccompArg `toml:"args,omitempty"`
}

// SeccompArg is a condition on one argument: Op is ==, !=, <, <=, >, >=,
// or "&=" (masked equality: arg & Mask == Value). Comparisons are on the
// full 64 bits; a mask of 0xffffffff compares an int argument's 32.
type SeccompArg struct {
	Index uint   `toml:"index"`
	Op    string `toml:"op"`
	Value uint64 `toml:"value"`
	Mask  uint64 `toml:"mask,omitempty"`
}

// Seccomp actions.
const (
	ActAllow = "allow"
	ActErrno = "errno"
	ActKill  = "kill"
	ActLog   = "log"
	ActTrap  = "trap"
)
