# Harness self-test: a line the guest prints must reach boot.sh's output
# while the guest still runs, since the host acts on such lines (make
# pressure's nr-flood-go, make bench's nr-icount-ready).  The guest prints
# the line, then stays up 6 s more.
echo "nr-selftest-streamed"
sleep 6
exit 0
