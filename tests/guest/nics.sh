# Both NICs QEMU gives us are there, with the drivers the project converts.
. /tests/lib.sh

test_nic_driver()
{
	dev=$1 want=$2
	drv=$(ethtool -i "$dev" 2>/dev/null | sed -n 's/^driver: //p')
	expect_eq "$dev driver" "$drv" "$want"
	log_test "$dev is driven by $want"
}

test_nic_driver eth0 e1000
test_nic_driver eth1 virtio_net
exit $test_failed
