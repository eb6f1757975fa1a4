# gojail: make build | demo | test | bench. See README.md.
SHELL := /bin/bash
GO ?= go
BIN := bin/gojail
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
# Debian packages the build, tests and demo need, by a file each provides.
# libseccomp-dev is for gojail-seccomp, the filter compiler; gojail itself
# is pure Go (a cgo binary starts 1.2-1.5 ms slower, on every run).
PKG_FILES := /usr/bin/gcc:gcc /usr/include/seccomp.h:libseccomp-dev /usr/bin/pkg-config:pkg-config \
	/usr/bin/python3:python3 /usr/bin/node:nodejs /usr/bin/setpriv:util-linux /usr/bin/strace:strace \
	/usr/lib/python3/dist-packages/numpy:python3-numpy /usr/lib/python3/dist-packages/pandas:python3-pandas
BENCH_FILES := /usr/bin/bwrap:bubblewrap /usr/bin/hyperfine:hyperfine
# gojail is built with Go 1.26's previous collector where the toolchain still
# has it: the Green Tea collector's small-object spans keep their mark bits
# in their last page, which each run's first allocations then touch (421
# page faults a /bin/true run against 377; -0.04 ms, 800 pairs). gojail
# collects rarely (a run not at all), so it loses nothing by it.
GOJAIL_EXPERIMENT := $(shell GOEXPERIMENT=nogreenteagc $(GO) env GOEXPERIMENT >/dev/null 2>&1 && echo nogreenteagc)

# The command's entry point clones a run's init before the Go runtime starts
# (jail.EntrySymbol).
ENTRY := github.com/gojail/gojail/jail.entry

.PHONY: build runtime-overlay generate deps bench-smoke bench-deps demo test test-unit test-rootless bench clean

# The binary is linked to a temporary file and copied into place: the Go
# linker writes its output through a shared mapping, and the page cache then
# holds it in 4 KB pages, where a copy's writes fill it in large folios; a
# run of the linked file itself took 0.11-0.15 ms longer (1000 pairs; the
# page-fault count is the same). Once dropped from the cache (a reboot),
# exec reads it back in 4 KB pages, as it does every executable: make bench
# measures it so (testdata/bench/run.sh).
build: deps runtime-overlay
	CGO_ENABLED=0 GOEXPERIMENT=$(GOJAIL_EXPERIMENT) $(GO) build -overlay $(abspath $(OVERLAY)) -trimpath -tags urfave_cli_no_docs -ldflags "-s -w -E $(ENTRY) -X main.version=$(VERSION)" -o $(BIN).linked ./cmd/gojail
	cp $(BIN).linked $(BIN).new && mv $(BIN).new $(BIN) && rm $(BIN).linked
	CGO_ENABLED=1 $(GO) build -trimpath -o bin/gojail-seccomp ./cmd/gojail-seccomp

# The Go runtime reads /proc/self/cgroup and /proc/self/mountinfo as every
# program starts, for its default GOMAXPROCS, and then drops what it read
# where GODEBUG containermaxprocs=0, as cmd/gojail sets it (golang/go#77911;
# the fix, golang/go#78124, makes that setting skip the reads, and is not in
# Go 1.26). The build applies that fix to the toolchain's own file through
# an overlay: 0.16-0.33 ms off each run (600 pairs, either order). Where the
# file is not as expected (a toolchain that has the fix, or changed the
# function), the overlay is empty and the binary is built as it is. (In a
# directory whose name starts with _, which go vet ./... leaves out.)
OVERLAY := bin/_runtime/overlay.json
runtime-overlay:
	@mkdir -p bin/_runtime; src=$$($(GO) env GOROOT)/src/runtime/cgroup_linux.go; out=$(abspath bin/_runtime/cgroup_linux.go); \
	if [ -f "$$src" ] && awk -v n=0 '{ print } \
		/^func defaultGOMAXPROCSInit\(\) {$$/ { if ((getline next_) > 0 && next_ ~ /^\tc, err := cgroup\.OpenCPU\(/) { print "\tif debug.containermaxprocs <= 0 {\n\t\treturn\n\t}"; n++ } print next_ } \
		END { exit n != 1 }' "$$src" >"$$out"; then \
		printf '{"Replace": {"%s": "%s"}}\n' "$$src" "$$out" >$(OVERLAY); \
	else \
		echo "runtime-overlay: $$src is not as expected; building without the overlay"; echo '{"Replace": {}}' >$(OVERLAY); \
	fi

# Regenerates the embedded default seccomp profile and the system-call name
# table from libseccomp (TestEmbeddedDefault fails when they are stale), and
# the built-in presets as Go (TestPresetsGenerated).
generate: build
	bin/gojail-seccomp generate jail/seccomp
	$(GO) run ./policy/internal/genpresets policy/presets_gen.go

# Installs what is missing with apt-get when root; otherwise names the command.
define install_missing
	@missing=""; for pf in $(1); do f=$${pf%%:*}; p=$${pf##*:}; [ -e "$$f" ] || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing:$$missing"; \
			DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
		else \
			echo "missing packages:$$missing; run: sudo apt-get install -y$$missing" >&2; exit 1; \
		fi; \
	fi
endef

deps:
	$(call install_missing,$(PKG_FILES))
	@command -v $(GO) >/dev/null || { echo "Go is not installed: see https://go.dev/doc/install" >&2; exit 1; }

bench-deps: deps
	$(call install_missing,$(BENCH_FILES))

demo: deps build
	@echo '$$ gojail run testdata/programs/demo.py'
	@$(BIN) run testdata/programs/demo.py
	@echo '$$ gojail run --json --timeout 500ms -c "while True: pass"'
	@$(BIN) run --json --timeout 500ms -c "while True: pass"; echo "(exit code $$?)"
	@echo '$$ gojail batch   # one JSON request per line, each in a fresh jail prepared ahead'
	@printf '%s\n' '{"code": "print(sum(range(101)))"}' '{"code": "1/0"}' | $(BIN) batch | cut -c1-100

test: deps build test-unit test-rootless bench-smoke

# Every test as the caller (root in CI).
test-unit:
	$(GO) vet ./...
	# -p 1: the packages' jail tests count the host's processes and cgroups.
	GOJAIL_BIN=$(abspath $(BIN)) $(GO) test -p 1 -count=1 ./...
	# The library under the race detector. The jail's init has no Go
	# runtime to call: its code is built without the detector's checks
	# (go:norace), and its atomics are its own (initStore32).
	CGO_ENABLED=1 $(GO) test -race -count=1 ./jail

# The jail tests again as an unprivileged user: rootless is a first-class mode.
test-rootless:
	@if [ "$$(id -u)" != 0 ]; then echo "test-rootless: already running as uid $$(id -u); test-unit was the rootless run"; exit 0; fi; \
	dir=$$(mktemp -d /tmp/gojail-rootless.XXXXXX) && trap 'rm -rf "$$dir"' EXIT && chmod 755 "$$dir" && \
	$(GO) test -c -o "$$dir/gojail.test" ./cmd/gojail && $(GO) test -c -o "$$dir/jail.test" ./jail && \
	cp $(BIN) bin/gojail-seccomp "$$dir/" && \
	$(GO) build -o "$$dir/hog" ./testdata/programs/hog && \
	rc=0; for pkg in jail cmd/gojail; do \
		echo "running the $$pkg tests as nobody (uid 65534)"; \
		(cd $$pkg && setpriv --reuid=65534 --regid=65534 --clear-groups \
			env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp TMPDIR=/tmp GOJAIL_BIN="$$dir/gojail" GOJAIL_HOG="$$dir/hog" \
			"$$dir/$$(basename $$pkg).test" -test.count=1 -test.v 2>&1) | grep -E '^(--- FAIL|FAIL|ok|PASS|panic)|SKIP|_test.go:' ; \
		[ "$${PIPESTATUS[0]}" = 0 ] || rc=1; \
	done; exit $$rc

bench: bench-deps build
	$(GO) build -o bin/bench-pair ./testdata/bench/pair
	$(GO) build -o bin/bench-prepared ./testdata/bench/prepared
	testdata/bench/run.sh $(BIN)

# make test checks that make bench still runs, with tiny counts and its
# figures thrown away: benchmarks are not timed tests.
bench-smoke: bench-deps build
	$(GO) build -o bin/bench-pair ./testdata/bench/pair
	$(GO) build -o bin/bench-prepared ./testdata/bench/prepared
	BENCH_RESULTS=/dev/null THROUGHPUT_RUNS=4 testdata/bench/run.sh $(BIN) 2 >/dev/null && echo "bench-smoke: make bench runs"

clean:
	rm -rf bin

.PHONY: test-cgroup2
# The cgroup tests again under cgroup v2 (unified), in a small qemu VM: the
# host's controllers are bound to cgroup v1. See testdata/vm/README.
test-cgroup2:
	GO=$(GO) testdata/vm/run.sh

.PHONY: hostile soak
# The hostile suite as a table (attack, expected, observed), with a minute of
# concurrent jails and a hundred runs killed at random points; fails unless
# every row matches. make test runs the same rows with shorter stress.
hostile: deps build
	set -o pipefail; cd cmd/gojail && GOJAIL_BIN=$(abspath $(BIN)) GOJAIL_HOSTILE_TABLE=1 GOJAIL_CONCURRENCY_SECONDS=60 GOJAIL_FAULT_RUNS=100 \
		$(GO) test -count=1 -run 'TestHostile|TestConcurrentJails|TestKilledAtAnyPoint|TestOutOfDescriptors' -v . \
		| grep -E '^\||^(--- |ok|FAIL|PASS)|stress_test'

# 10,000 runs in a row from one caller; make test runs 300.
soak: deps build
	set -o pipefail; GOJAIL_SOAK=10000 $(GO) test -count=1 -timeout 60m -run TestSoak -v ./jail | grep -E 'soak_test|^(--- |ok|FAIL|PASS)'
