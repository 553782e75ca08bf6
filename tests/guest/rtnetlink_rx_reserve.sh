# IFLA_RX_RESERVE through the real `ip` and raw rtnetlink: bad input gets a
# clear errno and extack message and changes nothing.  Devices without
# support (lo, dummy, veth) refuse a share.
. /tests/lib.sh

# expect_ip_error DESC WANT_TEXT ip ARGS...: the command fails and says WANT_TEXT.
expect_ip_error()
{
	desc=$1 want=$2
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "    $desc: '$*' succeeded"
		ret=1
	elif ! printf '%s' "$out" | grep -qF -- "$want"; then
		echo "    $desc: '$*' said '$out', want '$want'"
		ret=1
	fi
}

# No rx_reserve in `ip -d link show DEV` (the device reports none).
expect_no_attr()
{
	if ip -d link show dev "$1" | grep -q rx_reserve; then
		echo "    $1 reports rx_reserve"
		ret=1
	fi
	if ip -j -s -d link show dev "$1" | grep -q '"rx_reserve'; then
		echo "    $1 reports rx_reserve in JSON"
		ret=1
	fi
}

test_unsupported_devices()
{
	ip link add nr_dummy type dummy
	ip link add nr_veth0 type veth peer name nr_veth1
	for dev in lo nr_dummy nr_veth0; do
		expect_ip_error "$dev" "Device does not support an RX reserve" \
			ip link set dev "$dev" rx_reserve 10
		out=$(nr-rtnl "$dev" 4 10)
		check_fail $?
		expect_eq "$dev raw errno" "$out" "errno 95: Device does not support an RX reserve"
		expect_no_attr "$dev"
	done
	log_test "devices without support refuse a share (EOPNOTSUPP, extack) and report none"

	# The same message also asked for an MTU: nothing of it happened.
	mtu_before=$(cat /sys/class/net/nr_dummy/mtu)
	expect_ip_error "mtu+rx_reserve" "Device does not support an RX reserve" \
		ip link set dev nr_dummy mtu 1400 rx_reserve 10
	expect_eq "nr_dummy mtu" "$(cat /sys/class/net/nr_dummy/mtu)" "$mtu_before"
	log_test "a refused message changes none of its other attributes"
	ip link del nr_dummy
	ip link del nr_veth0

	# RTM_NEWLINK that creates a device: refused, not ignored, and no
	# device is left behind.
	expect_ip_error "create with rx_reserve" "A device being created has no RX reserve" \
		ip link add nr_dummy2 rx_reserve 10 type dummy
	[ ! -e /sys/class/net/nr_dummy2 ] || { echo "    nr_dummy2 was created"; ret=1; ip link del nr_dummy2; }
	log_test "creating a device with rx_reserve fails (EOPNOTSUPP, extack) and creates nothing"
}

test_bad_values()
{
	expect_ip_error "not a number" 'Invalid "rx_reserve" value' \
		ip link set dev lo rx_reserve many
	expect_ip_error "negative" 'Invalid "rx_reserve" value' \
		ip link set dev lo rx_reserve -1
	expect_ip_error "above the maximum" "out of range" \
		ip link set dev lo rx_reserve 4097
	log_test "a non-number, a negative value and one above the maximum are refused"
}

test_unprivileged()
{
	# In a user namespace of its own, root has CAP_NET_ADMIN over its own
	# network namespace, but not in the initial user namespace.
	# (busybox's unshare would run its own ip applet: name iproute2's.)
	out=$(unshare -Urn /sbin/ip link set dev lo rx_reserve 10 2>&1)
	check_fail $?
	printf '%s' "$out" | grep -qF "needs CAP_NET_ADMIN in the initial user namespace" ||
		{ echo "    said: $out"; ret=1; }
	out=$(unshare -Urn /usr/local/bin/nr-rtnl lo 4 10)
	check_fail $?
	expect_eq "raw errno" "${out%%:*}" "errno 1"
	log_test "a caller without CAP_NET_ADMIN in the initial user namespace gets EPERM"
}

test_raw_lengths()
{
	for len in 0 2 8; do
		out=$(nr-rtnl lo "$len" 10)
		check_fail $?
		case "$out" in
		"errno 22: "*) ;;
		*) echo "    length $len: $out"; ret=1 ;;
		esac
	done
	out=$(nr-rtnl lo 4 10)
	expect_eq "right length on lo" "$out" "errno 95: Device does not support an RX reserve"
	log_test "a raw IFLA_RX_RESERVE of the wrong length is refused (EINVAL)"
}

test_unsupported_devices
test_bad_values
test_unprivileged
test_raw_lengths
exit $test_failed
