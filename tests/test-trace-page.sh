#!/bin/sh
# SPDX-License-Identifier: MIT
# The trace page and the job list page, served by a real argusd and rendered
# by headless Chromium under the Content-Security-Policy argusd sends. A
# finished diagnosis (tests/fixtures/trace-descent.json: three levels, the
# leaf measured twice, committed) is written into the state database of an
# argusd started on a free loopback port; then:
#   - both pages are HTML and carry the policy;
#   - the DOM Chromium builds from the trace page holds the picture of the
#     descent, the nodes of the path, where the descent stopped, the links;
#     the one of GET / lists the job with a link to its trace page;
#   - the browser's console stays empty: no error, no policy violation;
#   - the screenshot shows the picture (pixels of the colour of the path).
# Needs root (argusd resolves its tree by loading probes), chromium, sqlite3,
# curl and python3 (scripts/install-deps.sh); exits 77 without them.
set -eu
src=${ARGUS_SOURCE_DIR:?ARGUS_SOURCE_DIR: the source tree}
build=${ARGUS_BUILD_DIR:?ARGUS_BUILD_DIR: the build tree}
fixture=$src/tests/fixtures/trace-descent.json
job=12
failed=0

skip() {
	echo "# SKIP all: $*"
	exit 77
}
fail() {
	echo "FAIL: $*"
	failed=1
}

[ "$(id -u)" = 0 ] || skip "argusd needs root"
for tool in chromium sqlite3 curl python3; do
	command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (scripts/install-deps.sh)"
done
[ -x "$build/argusd" ] || {
	echo "FAIL: no $build/argusd; build it first"
	exit 1
}

tmp=$(mktemp -d /tmp/argus-page-XXXXXX)
chmod 755 "$tmp"
pid=
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	[ -n "${ARGUS_KEEP_TEST_DIRS:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

mkdir "$tmp/workloads" "$tmp/programs" "$tmp/home"
cat >"$tmp/argusd.conf" <<EOF
listen = 127.0.0.1:0
state_dir = $tmp/state
workloads_dir = $tmp/workloads
victims_dir = $tmp/programs
tree_file = $src/tree-data/tree.json
schema_dir = $src/schema
EOF
"$build/argusd" --config "$tmp/argusd.conf" 2>"$tmp/argusd.log" &
pid=$!
port=
for _ in $(seq 1 150); do
	if grep -q "argusd ready" "$tmp/argusd.log"; then
		port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$tmp/argusd.log" | head -n 1)
		break
	fi
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.2
done
if [ -z "$port" ]; then
	cat "$tmp/argusd.log"
	echo "FAIL: argusd did not start"
	exit 1
fi

# the diagnosis, as the worker would have stored it
sqlite3 -cmd ".timeout 10000" "$tmp/state/argusd.db" "
INSERT INTO jobs (id, kind, state, progress, step, request, result, created, started, finished,
		  submitter)
SELECT json_extract(j, '\$.id'), json_extract(j, '\$.kind'), json_extract(j, '\$.state'), 1,
       json_extract(j, '\$.step'), json_extract(j, '\$.request'), json_extract(j, '\$.result'),
       json_extract(j, '\$.created'), json_extract(j, '\$.started'),
       json_extract(j, '\$.finished'), json_extract(j, '\$.submitter')
FROM (SELECT json_extract(readfile('$fixture'), '\$.job') AS j);
INSERT INTO trace_steps (job_id, seq, step)
SELECT $job, key, value FROM json_each(readfile('$fixture'), '\$.trace.steps');"

base=http://127.0.0.1:$port
trace_page="$base/jobs/$job/trace?format=html"

# what a browser is sent
for url in "$trace_page" "$base/"; do
	status=$(curl -s -D "$tmp/headers" -o /dev/null -w '%{http_code}' "$url")
	[ "$status" = 200 ] || fail "$url: status $status"
	grep -qi "^Content-Type: text/html" "$tmp/headers" || fail "$url: not text/html"
	grep -qi "^Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'" \
		"$tmp/headers" || fail "$url: not the page's Content-Security-Policy"
done

# Chromium on url (name: its output and log), the console checked
browse() {
	name=$1
	url=$2
	shift 2
	if ! HOME=$tmp/home timeout 40 chromium --headless --no-sandbox --disable-gpu \
		--no-first-run --disable-extensions --user-data-dir="$tmp/chromium" \
		--enable-logging=stderr --v=0 "$@" "$url" >"$tmp/$name.out" 2>"$tmp/$name.log"; then
		tail -n 20 "$tmp/$name.log"
		fail "chromium did not load $url"
	fi
	# any console message: an uncaught error, a blocked script or style
	if grep -E "Uncaught|:CONSOLE|Content Security Policy|Refused to" "$tmp/$name.log"; then
		fail "$url: console messages (above)"
	fi
}

# DOM has every fixed string
has() {
	name=$1
	shift
	for s in "$@"; do
		grep -qF -- "$s" "$tmp/$name.out" || fail "$name: no '$s'"
	done
}

browse trace-dom "$trace_page" --dump-dom
has trace-dom "<svg" "</svg>" \
	"<title>kernel_paging</title>" \
	"<title>kernel_paging.file_fault</title>" \
	"<title>kernel_paging.file_fault.major</title>" \
	">Level 1</text>" ">Level 3</text>" \
	"Stopped at level 3: commit" \
	"a leaf: committing; named again by a second run of level 3" \
	'href="/"' "href=\"/jobs/$job\"" "href=\"/jobs/$job/trace\"" 'href="/references/3"'
if grep -q "<script" "$tmp/trace-dom.out"; then
	fail "trace page: a script element"
fi

browse index-dom "$base/" --dump-dom
has index-dom "href=\"/jobs/$job/trace?format=html\"" "kernel_paging.file_fault.major" \
	"pf_page_cache" "bottleneck"

# drawn, not only present: the outlines and dots of the path taken (#d9480f)
browse trace-shot "$trace_page" --window-size=1100,900 --hide-scrollbars \
	--screenshot="$tmp/trace.png"
if [ -s "$tmp/trace.png" ]; then
	drawn=$(python3 - "$tmp/trace.png" <<'EOF'
import struct, sys, zlib

def pixels(path):
	data = open(path, "rb").read()
	assert data[:8] == b"\x89PNG\r\n\x1a\n"
	pos, idat = 8, b""
	while pos < len(data):
		n, kind = struct.unpack(">I4s", data[pos:pos + 8])
		body = data[pos + 8:pos + 8 + n]
		if kind == b"IHDR":
			w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
			assert depth == 8 and colour in (2, 6) and not interlace
		elif kind == b"IDAT":
			idat += body
		pos += 12 + n
	bpp = 4 if colour == 6 else 3
	raw, stride = zlib.decompress(idat), w * bpp
	prev = bytearray(stride)
	for y in range(h):
		f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
		for i in range(stride):
			a = line[i - bpp] if i >= bpp else 0
			b = prev[i]
			c = prev[i - bpp] if i >= bpp else 0
			if f == 1:
				line[i] = (line[i] + a) & 255
			elif f == 2:
				line[i] = (line[i] + b) & 255
			elif f == 3:
				line[i] = (line[i] + (a + b) // 2) & 255
			elif f == 4:
				p = a + b - c
				pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
				line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
		yield from (line[i:i + 3] for i in range(0, stride, bpp))
		prev = line

print(sum(1 for r, g, b in pixels(sys.argv[1])
	  if abs(r - 0xd9) < 40 and abs(g - 0x48) < 40 and abs(b - 0x0f) < 40))
EOF
)
	[ "${drawn:-0}" -ge 500 ] || fail "the screenshot shows ${drawn:-no} pixels of the path's colour"
else
	fail "no screenshot"
fi

if [ "$failed" = 0 ]; then
	echo "trace page and job list rendered: picture drawn ($drawn pixels of the path), console clean"
	exit 0
fi
[ -n "${ARGUS_KEEP_TEST_DIRS:-}" ] && echo "logs in $tmp" || echo "ARGUS_KEEP_TEST_DIRS=1 keeps the logs"
exit 1
