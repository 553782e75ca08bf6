#!/bin/bash
# The harness tests itself: a failing guest test, a kernel WARNING, and
# the reports that do not panic (lockdep, might_sleep(), RCU stalls) must
# each turn a run red, also inside an allocation failure report that a
# pressure run leaves out.  Prints one result line per check and the summary.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
boot=$top/tests/qemu/boot.sh
passed=0 failed=0

result() {
	if [ "$1" = 0 ]; then
		echo "    ok: harness: $2"
		passed=$((passed + 1))
	else
		echo "    FAIL: harness: $2"
		failed=$((failed + 1))
	fi
}

echo "=== harness self-test: a failing guest test fails the run"
log=$top/build/logs/selftest-failing.log
"$boot" --tests /tests/selftest/failing --log "$log" --timeout 300 >/dev/null 2>&1
rc=$?
# KUnit's results are counted in every run, so only the failures are exact.
[ "$rc" != 0 ] && tr -d '\r' <"$log" | grep -q '^[0-9]* passed, 1 failed$' &&
	grep -q 'FAIL: a check that fails on purpose' "$log"
result $? "a failing test gives a non-zero exit (got $rc) and 'N passed, 1 failed'"

echo "=== harness self-test: a kernel WARNING fails the run"
log=$top/build/logs/selftest-warn.log
"$boot" --mode script --script "$top/tests/guest-selftest/warn.sh" --log "$log" --timeout 300 >/dev/null 2>&1
rc=$?
[ "$rc" != 0 ] && grep -q 'WARNING:' "$log" && ! grep -q 'still alive after the WARNING' "$log"
result $? "a kernel WARNING gives a non-zero exit (got $rc) and shows in the log"

echo "=== harness self-test: the host sees a guest's line while the guest runs"
log=$top/build/logs/selftest-stream.log
times=$(mktemp)
"$boot" --mode script --script "$top/tests/guest-selftest/stream.sh" --log "$log" --timeout 300 2>&1 |
	{
		seen=
		while IFS= read -r line; do
			case "$line" in *nr-selftest-streamed*) seen=$SECONDS ;; esac
		done
		echo "${seen:-none} $SECONDS" >"$times"
	}
read -r seen ended <"$times"
rm -f "$times"
# The guest stays up 6 s after the line; mawk's block-buffered reading
# delivered it only at the end.
[ "$seen" != none ] && [ $((ended - seen)) -ge 4 ]
result $? "the line came $([ "$seen" = none ] && echo never || echo "$((ended - seen)) s before the guest ended") (want at least 4 s)"

# report_run REPORT: boot tests/guest-selftest/report.sh with nr_report=REPORT
# (the caller's environment passed on); sets rc and log.
report_run()
{
	log=$top/build/logs/selftest-$1.log
	"$boot" --mode script --script "$top/tests/guest-selftest/report.sh" \
		--append "nr_report=$1" --log "$log" --timeout 300 >/dev/null 2>&1
	rc=$?
}

# Reports that do not panic: the console alone must turn the run red.
for report in lockdep sleep rcu; do
	echo "=== harness self-test: a $report report on the console fails the run"
	report_run $report
	[ "$rc" != 0 ] && grep -q "nr-selftest-report: $report" "$log"
	result $? "a $report report gives a non-zero exit (got $rc)"
done

# Pressure runs leave allocation failure reports out; that must not hide
# anything printed inside one, and must still leave the report itself out.
echo "=== harness self-test: leaving allocation failures out hides nothing else"
NETRESERVE_ALLOW_ALLOC_FAILURE=1 report_run allocfail-hiding
[ "$rc" != 0 ] && grep -q 'nr-selftest-report: allocfail-hiding' "$log"
result $? "a report inside an allocation failure report gives a non-zero exit (got $rc)"
NETRESERVE_ALLOW_ALLOC_FAILURE=1 report_run allocfail
[ "$rc" = 0 ] && grep -q 'page allocation failure: order:0' "$log"
result $? "an allocation failure report alone is left out when allowed (got $rc)"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
