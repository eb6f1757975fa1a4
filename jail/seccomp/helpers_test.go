package seccomp

import "github.com/gojail/gojail/policy"

func defaultsSeccomp() policy.Seccomp { return policy.Defaults().Seccomp }
