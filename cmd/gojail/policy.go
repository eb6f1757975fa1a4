package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gojail/gojail/jail/seccomp"
	"github.com/gojail/gojail/policy"
	"github.com/gojail/gojail/validate"
)

func policyCommand() *cli.Command {
	return &cli.Command{
		Name:  "policy",
		Usage: "show or check policies",
		Subcommands: []*cli.Command{
			{
				Name:         "show",
				Usage:        "print the effective policy as TOML (defaults filled in)",
				ArgsUsage:    "NAME|FILE",
				OnUsageError: usageError,
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return cli.Exit("policy show takes one preset name or file; the presets are "+strings.Join(policy.PresetNames(), ", "), 125)
					}
					p, err := policy.Load(c.Args().First())
					if err != nil {
						return cli.Exit(err.Error(), 125)
					}
					b, err := policy.Encode(p)
					if err != nil {
						return cli.Exit(err.Error(), 125)
					}
					if _, err = os.Stdout.Write(b); err != nil {
						return err
					}
					// Shown as it is, and said to be unusable when it is.
					if err := checkPolicy(&p); err != nil {
						printProblems(c.Args().First(), err)
						return cli.Exit("this policy has problems: gojail run refuses it", 1)
					}
					return nil
				},
			},
			{
				Name:         "check",
				Usage:        "validate policies; print every problem; exit 0 only if all are valid",
				ArgsUsage:    "FILE...",
				OnUsageError: usageError,
				Action: func(c *cli.Context) error {
					if c.NArg() == 0 {
						return cli.Exit("policy check takes one or more policy files", 125)
					}
					bad := 0
					for _, ref := range c.Args().Slice() {
						p, err := policy.Load(ref)
						if err == nil {
							err = checkPolicy(&p)
						}
						if err != nil {
							bad++
							printProblems(ref, err)
							continue
						}
						for i, calls := range seccomp.Replaced(p.Seccomp) {
							if len(calls) > 0 {
								fmt.Fprintf(os.Stderr, "%s: note: seccomp rule %d replaces the default profile's rules for %s, which refuse some of their arguments (socket families, namespace flags, ...): it must refuse as much itself, or those refusals are gone (the README's Seccomp section lists them)\n", ref, i+1, strings.Join(calls, ", "))
							}
						}
						fmt.Printf("%s: ok\n", ref)
					}
					if bad > 0 {
						return cli.Exit(fmt.Sprintf("%d of %d policies have problems", bad, c.NArg()), 1)
					}
					return nil
				},
			},
		},
	}
}

// checkPolicy is what gojail run checks of a policy before it runs: every
// problem, the seccomp rules' system-call names among them also when
// another problem keeps the filter from being compiled.
func checkPolicy(p *policy.Policy) error {
	err := validate.Policy(p)
	if err == nil {
		return checkFilter(p)
	}
	if spec, serr := seccomp.SpecOf(p.Seccomp); serr == nil {
		if nerr := seccomp.CheckNames(spec); nerr != nil {
			return errors.Join(err, nerr)
		}
	}
	return err
}

// printProblems prints each of err's problems on its own line, named by
// the policy's file (a decoding error names its file and line already).
func printProblems(ref string, err error) {
	for _, e := range flatten(err) {
		var de *policy.DecodeError
		if errors.As(e, &de) {
			fmt.Fprintln(os.Stderr, e)
		} else {
			fmt.Fprintf(os.Stderr, "%s: %v\n", ref, e)
		}
	}
}

// flatten splits a joined error into its parts.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// checkFilter compiles the policy's seccomp filter, so that an unknown
// system call or a rule libseccomp refuses is found now, not at run time.
func checkFilter(p *policy.Policy) error {
	spec, err := seccomp.SpecOf(p.Seccomp)
	if err != nil {
		return err
	}
	if err := seccomp.CheckNames(spec); err != nil {
		return err
	}
	_, _, err = seccomp.Load(spec)
	return err
}
