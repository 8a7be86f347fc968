# SPDX-License-Identifier: MIT
# Sourced by the test command (scripts/test.sh): hold the host's own memory
# reclaim for the suite's duration, and give it back afterwards.
#
# Some VMs hand memory back to their host on their own: DAMON's proactive
# reclaim (a kdamond whose scheme pages out what looks cold: page cache read
# a minute ago included) and free page reporting (memory freed a moment ago
# is given to the host, and the next fault on it pays a host fault too).
# On such a machine a workload's page cache is evicted between the runs of
# its reference at random, its runs take 10% longer or shorter by chance,
# and the integration tests that diagnose a page-cache dropper cannot tell
# the dropper from the host. The tests measure argusd, not the host, so the
# suite holds both, as the matrix harness holds page reporting
# (bench/eval/evallib.py): every kdamond that is on is turned off, and the
# delay before a free page is reported is set to its maximum. argusd itself
# never does this: on a user's host its reference discipline (noisy
# references recorded again, quiet waits) is what copes.
#
#   reclaim_hold     remember what is on and hold it (prints what it held)
#   reclaim_release  put back what reclaim_hold changed (safe to call twice)
#
# A knob that is absent is left alone; one the kernel refuses is said, and
# the suite goes on (the tests may then fail on the host's reclaim).

RECLAIM_DAMON=/sys/kernel/mm/damon/admin/kdamonds
RECLAIM_REPORTING=/sys/module/page_reporting/parameters/min_free_ms
# This kernel's most: 300000 ms (5 minutes).
RECLAIM_REPORTING_HELD=300000
reclaim_kdamonds=""
reclaim_reporting_before=""

reclaim_hold() {
	local d
	for d in "$RECLAIM_DAMON"/[0-9]*; do
		[ -f "$d/state" ] || continue
		[ "$(cat "$d/state" 2>/dev/null)" = on ] || continue
		if echo off >"$d/state" 2>/dev/null; then
			reclaim_kdamonds="$reclaim_kdamonds $d"
			echo "reclaim: held DAMON's $d (was on)"
		else
			echo "reclaim: cannot turn $d off; the host's reclaim goes on" >&2
		fi
	done
	if [ -w "$RECLAIM_REPORTING" ]; then
		reclaim_reporting_before=$(cat "$RECLAIM_REPORTING")
		if echo "$RECLAIM_REPORTING_HELD" >"$RECLAIM_REPORTING" 2>/dev/null; then
			echo "reclaim: free page reporting delayed to $RECLAIM_REPORTING_HELD ms (was $reclaim_reporting_before)"
		else
			echo "reclaim: cannot delay free page reporting" >&2
			reclaim_reporting_before=""
		fi
	fi
}

reclaim_release() {
	local d
	for d in $reclaim_kdamonds; do
		# on again already: something else turned it on meanwhile, and "on" would be refused
		[ "$(cat "$d/state" 2>/dev/null)" = on ] && continue
		echo on >"$d/state" 2>/dev/null || echo "reclaim: cannot turn $d back on" >&2
	done
	reclaim_kdamonds=""
	if [ -n "$reclaim_reporting_before" ]; then
		echo "$reclaim_reporting_before" >"$RECLAIM_REPORTING" 2>/dev/null ||
			echo "reclaim: cannot restore min_free_ms $reclaim_reporting_before" >&2
		reclaim_reporting_before=""
	fi
}
