#!/bin/sh
# SPDX-License-Identifier: MIT
# Fail on any skip that tests/skips.allowed does not list.
#
#   check-skips.sh BUILD_DIR CTEST_OUTPUT
#
# A skip is a "# SKIP NAME: reason" line in a test's output (tests/tap.h,
# "all" for the whole test), recorded by CTest in BUILD_DIR's LastTest.log,
# or a test that CTest lists under "did not run" (exit 77 without saying
# why). Each is named TEST (whole) or TEST/NAME (a part) and must match a line
# of tests/skips.allowed. Prints every skip with its reason and whether it is
# allowed; exits 1 when one is not.
set -eu
build=$1
ctest_out=$2
allowed="$(dirname "$0")/../tests/skips.allowed"
log="$build/Testing/Temporary/LastTest.log"
[ -f "$log" ] || { echo "check-skips: no $log" >&2; exit 1; }

skips=$(mktemp)
trap 'rm -f "$skips"' EXIT
# "N/M Test: NAME" opens a test's block in LastTest.log.
awk '
/^[0-9]+\/[0-9]+ Test: / { test = $3; next }
/^# SKIP [^ :]+: / {
	name = $3; sub(/:$/, "", name)
	reason = $0; sub(/^# SKIP [^ :]+: /, "", reason)
	print (name == "all" ? test : test "/" name) "\t" reason
}' "$log" >"$skips"
# Tests CTest did not run, unless they said why above.
sed -n 's/^[[:space:]]*[0-9]* - \([^ ]*\) (Skipped)$/\1/p' "$ctest_out" | while read -r t; do
	grep -q "^$t	" "$skips" || printf '%s\t%s\n' "$t" "exited 77 without a reason" >>"$skips"
done

bad=0
while IFS='	' read -r id reason; do
	if grep -v '^#' "$allowed" | awk '{ print $1 }' | grep -qx "$id"; then
		echo "skip allowed: $id: $reason"
	else
		echo "SKIP NOT ALLOWED: $id: $reason (not in tests/skips.allowed)"
		bad=1
	fi
done <"$skips"
n=$(wc -l <"$skips")
echo "check-skips: $n skipped"
exit $bad
