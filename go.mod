module github.com/gojail/gojail

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/seccomp/libseccomp-golang v0.11.1
	github.com/urfave/cli/v2 v2.27.7
	golang.org/x/sys v0.49.0
)

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.7 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/xrash/smetrics v0.0.0-20240521201337-686a1a2994c1 // indirect
	golang.org/x/net v0.62.0 // indirect
)
