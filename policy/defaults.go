package policy

import "time"

// Defaults are the values every policy starts from, in one place. They are
// small on purpose: a run that needs more says so in its policy or flags.
func Defaults() Policy {
	return Policy{
		Run: Run{
			File:     "main",
			Env:      []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/work", "LANG=C.UTF-8", "TERM=dumb"},
			Workdir:  "/work",
			Hostname: "gojail",
			UID:      1000, // an ordinary user; the jail never runs the program as root
			GID:      1000,
		},
		Limits: Limits{
			WallTime:     Duration(5 * time.Second), // seconds, not minutes (nsjail's 600 s surprised users)
			CPUTime:      Duration(2 * time.Second),
			Memory:       256 << 20,
			Pids:         64,
			CPUs:         0, // no quota: the CPU-time limit bounds the work
			RlimitAS:     true,
			Output:       1 << 20,
			OutputAction: OutputTruncate,
			FileSize:     16 << 20,
			OpenFiles:    256,
			Stack:        8 << 20,
			CodeSize:     1 << 20,
			TmpSize:      64 << 20,
			WorkSize:     64 << 20,
			Inodes:       4096,
		},
		FS: FS{
			// The dynamic loader and libraries; /bin and /lib are links into /usr
			// on merged-/usr systems and are recreated as links; /etc/alternatives
			// holds the links that Debian resolves libraries through (libblas).
			ReadOnly: []string{"/usr", "/bin", "/lib", "/lib64", "/etc/ld.so.cache", "/etc/alternatives"},
			Proc:     ProcFull,
		},
		Net:     Net{Mode: NetNone},
		Seccomp: Seccomp{Profile: "default", DefaultAction: ActAllow},
	}
}
