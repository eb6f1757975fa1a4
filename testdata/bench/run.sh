#!/usr/bin/env bash
# make bench: gojail beside the bare command and bubblewrap, measured in one
# hyperfine run per workload, medians and ratios printed and written to
# testdata/bench/RESULTS.md (quoted by the README).
#   testdata/bench/run.sh BIN [RUNS]
set -euo pipefail
# Every command runs with the jail's environment: the caller's variables
# change what a bare run does (NODE_EXTRA_CA_CERTS makes node load the CA
# store: 61 ms against 24).
if [ -z "${GOJAIL_BENCH_ENV:-}" ]; then
	exec env -i GOJAIL_BENCH_ENV=1 PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 TERM=dumb \
		THROUGHPUT_RUNS="${THROUGHPUT_RUNS:-}" BENCH_RESULTS="${BENCH_RESULTS:-}" "$(realpath "$0")" "$@"
fi
gojail=$(realpath "${1:-bin/gojail}")
runs=${2:-200}
# gojail's executable as exec reads it after a boot, as it reads the
# system's executables and libraries that bubblewrap and the bare commands
# run: into 4 KB pages of the page cache. A copy just written (make build
# copies the linked file into place) is held in large folios, and runs
# 0.13-0.19 ms faster until it is dropped from the cache.
sync "$gojail"
dd if="$gojail" iflag=nocache count=0 status=none
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d /tmp/gojail-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT
cp "$here/csvjob.py" "$out/csvjob.py"
chmod -R a+rX "$out"

# bubblewrap as it is commonly used: the system's directories read-only,
# every namespace, no limits (it has none of its own).
bwrap="bwrap --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 --ro-bind /etc/alternatives /etc/alternatives --proc /proc --dev /dev --tmpfs /tmp --unshare-all --die-with-parent --new-session"

bench() { # name, bare command, gojail command, bwrap command
	local name=$1
	hyperfine -N --style none --warmup 20 --runs "$runs" --export-json "$out/$name.json" \
		-n bare "$2" -n gojail "$3" -n bubblewrap "$4" >/dev/null 2>&1
}

bench true "/bin/true" "$gojail run -- /bin/true" "$bwrap /bin/true"
# The same python3 -c pass in each, under gojail's python preset. (gojail run
# -c CODE writes CODE to /work/main.py and runs that, for its tracebacks:
# Python itself takes some 0.07 ms longer to run a file than -c.)
bench python "/usr/bin/python3 -c pass" "$gojail run --policy python -- /usr/bin/python3 -c pass" "$bwrap /usr/bin/python3 -c pass"
echo 0 >"$out/zero.js"
bench node "/usr/bin/node $out/zero.js" "$gojail run $out/zero.js" "$bwrap --ro-bind $out $out /usr/bin/node $out/zero.js"
bench csv "/usr/bin/python3 $out/csvjob.py" "$gojail run $out/csvjob.py" "$bwrap --ro-bind $out $out /usr/bin/python3 $out/csvjob.py"

# Throughput: 1,000 short runs, two at a time.
n=${THROUGHPUT_RUNS:-1000}
n=${n:-1000}
tp_p() { local s e; s=$(date +%s%N); seq "$n" | xargs -P"$2" -I{} sh -c "$1" >/dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
tp() { tp_p "$1" 2; }
tp_bare=$(tp "/bin/true")
tp_gojail=$(tp "$gojail run -- /bin/true")
tp_bwrap=$(tp "$bwrap /bin/true")
# The same runs through prepared jails, the mode for many runs in a row: two
# gojail batch processes at once, each given half the requests back to back
# (bubblewrap has no such mode: its row above is the one to compare with).
# Every result must be ok, or the figure would count runs that did not run.
tp_batch() {
	local s e h=$(( n > 1 ? n / 2 : 1 )) a b ra=0 rb=0
	printf '{"program": "/bin/true"}\n%.0s' $(seq "$h") >"$out/requests"
	s=$(date +%s%N)
	"$gojail" batch --policy exec <"$out/requests" >"$out/batch1" & a=$!
	"$gojail" batch --policy exec <"$out/requests" >"$out/batch2" & b=$!
	wait "$a" || ra=$?
	wait "$b" || rb=$?
	e=$(date +%s%N)
	if [ "$ra$rb" != 00 ]; then
		echo "run.sh: gojail batch exited $ra and $rb" >&2
		exit 1
	fi
	for f in "$out/batch1" "$out/batch2"; do
		if [ "$(grep -c '^{"status":"ok",' "$f")" != "$h" ]; then
			echo "run.sh: gojail batch did not answer each of $h requests ok ($f):" >&2
			grep -v '^{"status":"ok",' "$f" | head -3 >&2
			exit 1
		fi
	done
	echo $(( (e - s) / 1000 * n / (2 * h) ))
}
tp_batch=$(tp_batch)

# Scaling with runs at once: N runs of /bin/true with P at a time, per run.
scale=""
for p in 1 2 4 8; do
	scale="$scale $p:$(tp_p "$gojail run -- /bin/true" "$p"):$(tp_p "/bin/true" "$p")"
done

# Scaling with the policy's binds: 5 (the default's), 50 and 500 (more
# directories of /usr/share, each its own read-only bind).
for nb in 50 500; do
	{
		echo 'base = "exec"'
		echo '[fs]'
		printf 'ro = ["/usr", "/bin", "/lib", "/lib64", "/etc/ld.so.cache"'
		ls -d /usr/share/*/*/ | sed -n "1,$((nb - 5))p" | sed 's#/$##' | while read -r d; do printf ', "%s"' "$d"; done
		echo ']'
	} >"$out/binds$nb.toml"
	# The same directories bound read-only by bubblewrap, after its usual
	# ones (fewer runs: it takes some 0.4 s with 500).
	ls -d /usr/share/*/*/ | sed -n "1,$((nb - 5))p" | sed 's#/$##' | while read -r d; do printf ' --ro-bind %s %s' "$d" "$d"; done >"$out/bwrapbinds$nb"
done
hyperfine -N --style none --warmup 10 --runs "$runs" --export-json "$out/binds.json" \
	-n 5 "$gojail run -- /bin/true" -n 50 "$gojail run --policy $out/binds50.toml -- /bin/true" \
	-n 500 "$gojail run --policy $out/binds500.toml -- /bin/true" >/dev/null 2>&1
bruns=$(( runs / 20 > 3 ? runs / 20 : 3 ))
hyperfine -N --style none --warmup 2 --runs "$bruns" --export-json "$out/bwrapbinds.json" \
	-n 5 "$bwrap /bin/true" -n 50 "$bwrap $(cat "$out/bwrapbinds50") /bin/true" \
	-n 500 "$bwrap $(cat "$out/bwrapbinds500") /bin/true" >/dev/null 2>&1

# The supervisor's own peak resident memory (VmHWM, which --debug prints
# after the result): a plain run, and floods of zero bytes (which JSON
# escapes six to one) at the default cap and, far longer, at a small one
# (4 GiB take nearly 2 s of CPU, the exec preset's limit: it is raised).
own_peak() { "$gojail" run --json --debug --timeout 60s --cpu-time 60s "$@" 2>&1 >/dev/null | sed -n "s/^gojail: the supervisor's own peak resident memory: \([0-9]*\) kB\$/\1/p"; }
mem="$(own_peak -- /bin/true):$(own_peak -- /usr/bin/head -c 1073741824 /dev/zero):$(own_peak --output-limit 64KiB -- /usr/bin/head -c 4294967296 /dev/zero)"

# The same budgets with the runs paired: each gojail run in turn with one
# of the other command's (pair), so that a drift of the machine falls on
# both alike; the median of the paired differences.
pair="$(dirname "$gojail")/bench-pair" # built by make bench from testdata/bench/pair
pairs=$(( runs * 5 / 2 < 500 ? runs * 5 / 2 : 500 ))
paired="$("$pair" "$pairs" /bin/true :: $gojail run -- /bin/true)"
paired="$paired:$("$pair" "$pairs" $bwrap /bin/true :: $gojail run -- /bin/true)"
paired="$paired:$("$pair" "$pairs" /usr/bin/python3 -c pass :: $gojail run --policy python -- /usr/bin/python3 -c pass)"
paired="$paired:$("$pair" "$pairs" $bwrap /usr/bin/python3 -c pass :: $gojail run --policy python -- /usr/bin/python3 -c pass)"

# Prepared jails (gojail batch): requests and bare runs in turn, each 20 ms
# after the one before, so that the next jail is prepared in the gaps (a
# bare run takes about twice as long 20 ms after the last as back to back):
# the bare run, the request's round trip as its client sees it, gojail's
# own latency_ms, and the paired difference (testdata/bench/prepared).
m=$(( n < 200 ? n : 200 ))
prepared=$("$(dirname "$gojail")/bench-prepared" "$m" 20ms "$gojail" --policy exec -- /bin/true)

/usr/bin/python3 - "$out" "$n" "$tp_bare" "$tp_gojail" "$tp_bwrap" "$tp_batch" "${BENCH_RESULTS:-$here/RESULTS.md}" "$scale" "$paired" "$pairs" "$mem" "$prepared" "$m" <<'PY'
import json, os, platform, statistics, subprocess, sys, datetime
out, n, tps, path = sys.argv[1], int(sys.argv[2]), [int(x) for x in sys.argv[3:7]], sys.argv[7]
scale = [tuple(int(v) for v in x.split(":")) for x in sys.argv[8].split()]
pr = [[float(v) for v in x.split()] for x in sys.argv[9].split(":")]  # other, gojail, gojail - other
npairs = sys.argv[10]
mem = [int(v) / 1024 for v in sys.argv[11].split(":")]
prep, nreq = [float(v) for v in sys.argv[12].split()], sys.argv[13]  # bare, round trip, latency_ms, round trip - bare
paired = [f"| {label} | +{pr[i][2]:.2f} ms | {pr[i + 1][2]:+.2f} ms | {pr[i + 1][1] / pr[i + 1][0]:.2f} |"
          for i, label in ((0, "/bin/true"), (2, "python3 -c pass"))]
rows = []
for name, label in [("true", "/bin/true"), ("python", "python3 -c pass"), ("node", "node, a file holding 0"), ("csv", "CSV job (100,000 rows)")]:
    res = {r["command"]: statistics.median(r["times"]) * 1000 for r in json.load(open(os.path.join(out, name + ".json")))["results"]}
    b, g, w = res["bare"], res["gojail"], res["bubblewrap"]
    rows.append(f"| {label} | {b:.2f} ms | {g:.2f} ms | {w:.2f} ms | +{g - b:.2f} ms | {g / b:.2f} | {g / w:.2f} |")
per = [t / n / 1000 for t in tps]
rows.append(f"| {n} runs, 2 at a time (per run) | {per[0]:.2f} ms | {per[1]:.2f} ms | {per[2]:.2f} ms | +{per[1] - per[0]:.2f} ms | {per[1] / per[0]:.2f} | {per[1] / per[2]:.2f} |")
rows.append(f"| the same, prepared: two gojail batch, {n // 2 if n > 1 else 1} requests each (per run) | {per[0]:.2f} ms | {per[3]:.2f} ms | {per[2]:.2f} ms | +{per[3] - per[0]:.2f} ms | {per[3] / per[0]:.2f} | {per[3] / per[2]:.2f} |")
bare_true = {r["command"]: statistics.median(r["times"]) * 1000 for r in json.load(open(os.path.join(out, "true.json")))["results"]}["bare"]
batch = [f"| /bin/true, {nreq} of each | {prep[0]:.2f} ms | {prep[1]:.2f} ms | {prep[2]:.2f} ms | {prep[3]:+.2f} ms | {bare_true:.2f} ms | {prep[2] - bare_true:+.2f} ms |"]
bres = {r["command"]: statistics.median(r["times"]) * 1000 for r in json.load(open(os.path.join(out, "binds.json")))["results"]}
wres = {r["command"]: statistics.median(r["times"]) * 1000 for r in json.load(open(os.path.join(out, "bwrapbinds.json")))["results"]}
def per_bind(res, k):
    return "" if k == "5" else "%.1f µs" % ((res[k] - res["5"]) / (int(k) - 5) * 1000)
binds = [f"| {k} | {bres[k]:.2f} ms | {per_bind(bres, k)} | {wres[k]:.2f} ms | {per_bind(wres, k)} |" for k in ("5", "50", "500")]
kernel = platform.release()
cpus = os.cpu_count()
text = "\n".join([
    f"Measured {datetime.date.today()} by `make bench` on {platform.node()} ({cpus} CPUs, Linux {kernel}), hyperfine medians.",
    "gojail runs with every namespace, its cgroup limits, the default seccomp profile and its wall-clock watchdog;",
    "bubblewrap with every namespace and no limits. Each row runs the same command in each (python3 -c pass under",
    "gojail: its python preset, gojail run --policy python -- /usr/bin/python3 -c pass).",
    "",
    "| workload | bare | gojail | bubblewrap | gojail - bare | gojail / bare | gojail / bubblewrap |",
    "|---|---|---|---|---|---|---|",
    *rows, "",
    f"The same with the runs paired ({npairs} pairs each: a gojail run in turn with one of the other command's, so that a drift",
    "of the machine falls on both alike): the median of the paired differences.", "",
    "| workload | gojail - bare | gojail - bubblewrap | gojail / bubblewrap |", "|---|---|---|---|",
    *paired, "",
    f"Runs at once ({n} runs of /bin/true, P at a time): wall time per run, gojail and bare.", "",
    "| at once | gojail | bare | gojail / bare |", "|---|---|---|---|",
    *[f"| {p} | {g / n / 1000:.2f} ms | {b / n / 1000:.2f} ms | {g / b:.2f} |" for p, g, b in scale], "",
    "Prepared jails (gojail batch): requests and bare runs in turn, each 20 ms after the one before, medians: the bare run (fork, exec, wait),",
    "the request's round trip as its client sees it (request written to result read), gojail's own latency_ms (request read to result),",
    "and the round trip less the bare run, paired; then the bare run back to back (hyperfine, above), and latency_ms less that.",
    "Beside it, go-judge's published figure for its pre-forked containers: about 1 ms over an unsandboxed run.", "",
    "| workload | bare, 20 ms after the last | round trip | latency_ms | round trip - bare (paired) | bare, back to back | latency_ms - that |",
    "|---|---|---|---|---|---|---|",
    *batch, "",
    "Binds in the policy (gojail run -- /bin/true), and the same directories bound read-only by bubblewrap after its usual ones:", "",
    "| binds | gojail | per extra bind | bubblewrap | per extra bind |", "|---|---|---|---|---|",
    *binds, "",
    "The supervisor's own peak resident memory (VmHWM, printed by --debug; gojail run --json):", "",
    "| run | peak |", "|---|---|",
    f"| /bin/true | {mem[0]:.1f} MB |",
    f"| 1 GiB of zero bytes, the default 1 MiB kept | {mem[1]:.1f} MB |",
    f"| 4 GiB of zero bytes, 64 KiB kept | {mem[2]:.1f} MB |", ""])
open(path, "w").write(text)
print(text)
PY
