# Devices that did not opt in to the RX reserve leave the global reserve and
# the zone watermarks exactly as min_free_kbytes makes them, through up/down;
# and vm.min_free_kbytes reads back as written.
. /tests/lib.sh

# The sum of the zones' min watermarks, and what min_free_kbytes plus the
# memalloc reserve make it by __setup_per_zone_wmarks(): each zone's share of
# the pages, rounded down.
wmark_check()
{
	min_free=$(cat /proc/sys/vm/min_free_kbytes)
	reserve=$(cat /proc/sys/vm/memalloc_reserve_kbytes)
	awk -v kb=$((min_free + reserve)) '
		/^Node .* zone/ { zone = $4 }
		$1 == "min" && zone != "" { min[zone] = $2 }
		$1 == "managed" && zone != "" { managed[zone] = $2; total += $2 }
		END {
			pages_min = int(kb / 4)
			for (z in managed) {
				want += int(pages_min * managed[z] / total)
				got += min[z]
			}
			printf "%d %d\n", got, want
		}' /proc/zoneinfo
}

test_no_reserve_at_boot()
{
	expect_eq "memalloc_reserve_kbytes" "$(cat /proc/sys/vm/memalloc_reserve_kbytes)" 0
	set -- $(wmark_check)
	expect_eq "sum of zone min watermarks" "$1" "$2"
	log_test "no reserve at boot; watermarks follow min_free_kbytes"
}

test_up_down_changes_nothing()
{
	before=$(cat /proc/zoneinfo | grep -E '^ +(min|low|high) ')
	ip link add nr_dummy type dummy && ip link add nr_veth0 type veth peer name nr_veth1
	check_err $?
	for i in 1 2 3; do
		for dev in nr_dummy nr_veth0 nr_veth1; do
			ip link set "$dev" up && ip link set "$dev" down
			check_err $?
		done
	done
	ip link del nr_dummy
	ip link del nr_veth0
	expect_eq "memalloc_reserve_kbytes" "$(cat /proc/sys/vm/memalloc_reserve_kbytes)" 0
	after=$(cat /proc/zoneinfo | grep -E '^ +(min|low|high) ')
	[ "$before" = "$after" ] || { echo "    watermarks changed"; ret=1; }
	log_test "up/down of devices without a reserve leaves the watermarks alone"
}

test_min_free_kbytes_reads_back()
{
	orig=$(cat /proc/sys/vm/min_free_kbytes)
	echo $((orig + 1024)) >/proc/sys/vm/min_free_kbytes
	expect_eq "min_free_kbytes" "$(cat /proc/sys/vm/min_free_kbytes)" $((orig + 1024))
	set -- $(wmark_check)
	expect_eq "sum of zone min watermarks" "$1" "$2"
	echo "$orig" >/proc/sys/vm/min_free_kbytes
	expect_eq "min_free_kbytes" "$(cat /proc/sys/vm/min_free_kbytes)" "$orig"
	(echo 1 >/proc/sys/vm/memalloc_reserve_kbytes) 2>/dev/null
	check_fail $?
	expect_eq "memalloc_reserve_kbytes" "$(cat /proc/sys/vm/memalloc_reserve_kbytes)" 0
	log_test "min_free_kbytes reads back as written; memalloc_reserve_kbytes is read-only"
}

test_no_reserve_at_boot
test_up_down_changes_nothing
test_min_free_kbytes_reads_back
exit $test_failed
