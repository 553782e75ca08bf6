# SO_MEMALLOC: TCP and UDP over IPv4 and IPv6 can be marked and cleared,
# sk_memalloc_socks() stays exact through double marks, clears and close,
# other sockets and unprivileged callers are refused.
. /tests/lib.sh

# The program prints its own results; its status counts too (a crash
# before any result line must fail the test).
nr-memalloc check || test_failed=1
# This one checks the privilege rule.
out=$(unshare -Ur /usr/local/bin/nr-memalloc check-eperm)
rc=$?
echo "$out"
[ $rc -eq 0 ] || test_failed=1
exit $test_failed
