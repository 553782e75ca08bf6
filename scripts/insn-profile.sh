#!/bin/bash
# insn-profile.sh [NIC [IP_LEN]]: where the instructions of one received
# packet go, kernel function by kernel function, patched against stock 6.1
# (the bench kernels of make bench-kernels).  Boots each kernel once as make
# bench's instruction count does (scripts/icount-bench.sh, NIC eth0 or eth1,
# default eth0 92) with the TCG plugin nr-insn-profile counting every
# translation block's instructions, folds the counts into the functions of
# the kernel's System.map between nr-icount's two sync(2) calls (before
# and after its window), and divides by the packets: the executions of
# __udp4_lib_rcv's first block, once per datagram.  Prints the functions
# whose cost per packet differs most and the totals; writes
# build/bench/profile/ (PROFILE_OUT).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
nic=${1:-eth0} len=${2:-92}
out=${PROFILE_OUT:-$top/build/bench/profile}
plugin=$top/build/host/nr-insn-profile.so
mkdir -p "$out" "$top/build/host"
gcc -shared -fPIC -O2 -Wall -Wextra -Werror -fvisibility=hidden \
	-o "$plugin" "$top/tests/bench/nr-insn-profile.c" -lpthread || exit 1

declare -A tree=([patched]=kernel-bench [stock]=kernel-stock-bench)
# PROFILE_REUSE=1: no boots, the report again from the last profiles.
for k in patched stock; do
	[ "${PROFILE_REUSE:-0}" = 1 ] && break
	echo "insn-profile: $k kernel, $nic, $len bytes"
	rm -f "$out/$k.prof".* "$out/$k.tsv"
	# Snapshots when nr-icount enters sync(2), before and after its window.
	marker=$(awk '$3 == "__x64_sys_sync" { print $1 }' "$top/build/${tree[$k]}/System.map")
	NETRESERVE_PLUGIN="$plugin,out=$out/$k.prof,marker=$marker" \
		ICOUNT_APPEND="nr_icount_nics=$nic nr_icount_lengths=$len" \
		"$top/scripts/icount-bench.sh" "$k" "$top/build/${tree[$k]}/arch/x86/boot/bzImage" 1 \
		"$out/$k.tsv" "$out/$k.log" >"$out/$k.out" 2>&1 || { echo "insn-profile: the $k boot failed ($out/$k.out)"; exit 1; }
	[ -s "$out/$k.prof.1" ] || { echo "insn-profile: no profile from the $k boot" >&2; exit 1; }
done

python3 - "$out" "$top/build/kernel-bench/System.map" "$top/build/kernel-stock-bench/System.map" <<'PY' | tee "$out/report.txt"
import bisect, sys
out, maps = sys.argv[1], {"patched": sys.argv[2], "stock": sys.argv[3]}

def fold(kernel):
    syms = []
    for line in open(maps[kernel]):
        addr, kind, name = line.split()[:3]
        if kind in "tTwW":
            syms.append((int(addr, 16), name))
    syms.sort()
    starts = [a for a, _ in syms]
    per_fn, entry = {}, {a: n for a, n in syms}
    packets = 0
    # A block translated again has a line of its own: sum per address.
    def load(path):
        counts = {}
        for line in open(path):
            vaddr, execs, insns = line.split()
            e, i = counts.get(int(vaddr, 16), (0, 0))
            counts[int(vaddr, 16)] = (e + int(execs), i + int(insns))
        return counts
    before = load(f"{out}/{kernel}.prof.0")
    for vaddr, (execs, insns) in load(f"{out}/{kernel}.prof.1").items():
        e0, i0 = before.get(vaddr, (0, 0))
        execs, insns = execs - e0, insns - i0
        if vaddr < 0xffffffff80000000:
            name = "(user space)"
        else:
            i = bisect.bisect_right(starts, vaddr) - 1
            name = syms[i][1] if i >= 0 else "(unknown)"
        per_fn[name] = per_fn.get(name, 0) + insns
        if entry.get(vaddr) == "__udp4_lib_rcv":
            packets += execs
    return per_fn, packets

p, pp = fold("patched")
s, sp = fold("stock")
print(f"packets (calls of __udp4_lib_rcv): patched {pp}, stock {sp}")
print("instructions per packet from nr-icount's ready to its result (the flood, and the")
print("idle soak in user space before the first and after the last packet):")
kp = sum(v for k, v in p.items() if k != "(user space)") / pp
ks = sum(v for k, v in s.items() if k != "(user space)") / sp
print(f"  kernel only: patched {kp:.1f}, stock {ks:.1f}, difference {kp - ks:+.1f}")
rows = []
for name in set(p) | set(s):
    a, b = p.get(name, 0) / pp, s.get(name, 0) / sp
    rows.append((a - b, name, a, b))
rows.sort(key=lambda r: -abs(r[0]))
print(f"\n{'function':40} {'patched':>10} {'stock':>10} {'difference':>11}  (instructions per packet)")
for d, name, a, b in rows[:30]:
    print(f"{name:40} {a:10.2f} {b:10.2f} {d:+11.2f}")
PY
