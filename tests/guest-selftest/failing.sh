# Harness self-test: one check passes, one fails.  A run of this directory must
# end red; tests/harness-selftest.sh asserts that it does.
. /tests/lib.sh

expect_eq "arithmetic" "$((1 + 1))" 2
log_test "a check that passes"

expect_eq "arithmetic" "$((1 + 1))" 3
log_test "a check that fails on purpose"
exit $test_failed
