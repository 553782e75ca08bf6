# Harness self-test: put one of the kernel's own reports on the console
# through /dev/kmsg, in the kernel's words, then exit 0.  None of these
# reports panics the kernel (lockdep, might_sleep() and RCU's stall
# warnings print and go on), so the harness must turn the run red from the
# console alone.  nr_report= picks it:
#   lockdep   a lockdep report (kernel/locking/lockdep.c)
#   sleep     a might_sleep() report (kernel/sched/core.c)
#   rcu       an RCU CPU stall warning (kernel/rcu/tree_stall.h)
#   allocfail an allocation failure report (mm/page_alloc.c, warn_alloc()),
#             which pressure runs expect and leave out
#   allocfail-hiding  the same with a might_sleep() report printed inside
#             it, as another CPU's report can be: leaving the allocation
#             failure out must not hide it
. /tests/lib.sh
kmsg() { echo "<4>$*" >/dev/kmsg; }
allocfail_report()
{
	kmsg "kworker/u4:1: page allocation failure: order:0, mode:0xa20(GFP_ATOMIC), nodemask=(null),cpuset=/,mems_allowed=0"
	kmsg "CPU: 1 PID: 42 Comm: kworker/u4:1 Not tainted 6.1.0 #1"
	kmsg "Call Trace:"
	kmsg " <TASK>"
	kmsg " dump_stack_lvl+0x45/0x5e"
	kmsg " warn_alloc+0x10f/0x180"
	[ "$1" = hiding ] && kmsg "BUG: sleeping function called from invalid context at mm/slab.h:723"
	kmsg " __alloc_pages+0x1c1/0x210"
	kmsg " </TASK>"
	kmsg "Mem-Info:"
}
report=$(boot_arg nr_report)
echo "nr-selftest-report: $report"
case "$report" in
lockdep)
	kmsg "======================================================"
	kmsg "WARNING: possible circular locking dependency detected"
	kmsg "6.1.0 #1 Not tainted"
	;;
sleep)
	kmsg "BUG: sleeping function called from invalid context at mm/slab.h:723"
	kmsg "in_atomic(): 1, irqs_disabled(): 0, non_block: 0, pid: 42, name: nr-selftest"
	;;
rcu)
	kmsg "rcu: INFO: rcu_sched self-detected stall on CPU"
	kmsg "rcu: 	1-....: (21002 ticks this GP) idle=8ad/1/0x4000000000000000 softirq=1/1 fqs=5250"
	;;
allocfail) allocfail_report plain ;;
allocfail-hiding) allocfail_report hiding ;;
*) echo "report.sh: unknown nr_report '$report'" >&2; exit 1 ;;
esac
exit 0
