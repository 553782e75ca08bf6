# Harness self-test: provoke a kernel WARNING through LKDTM.  With
# panic_on_warn the guest panics; the run must end red and its log show it.
echo "provoking a kernel WARNING"
echo WARNING >/sys/kernel/debug/provoke-crash/DIRECT
echo "still alive after the WARNING: panic_on_warn did not fire"
exit 0
