# netreserve: a per-network-device emergency memory reserve for Linux 6.1.
# `make help` lists the targets.

SHELL := /bin/bash
TOP := $(CURDIR)
BUILD := $(TOP)/build
KSRC := $(BUILD)/linux
KOUT := $(BUILD)/kernel
STOCK_SRC := $(BUILD)/linux-stock
STOCK_OUT := $(BUILD)/kernel-stock
DEBUG_OUT := $(BUILD)/kernel-debug
BZIMAGE := $(KOUT)/arch/x86/boot/bzImage
INITRAMFS := $(BUILD)/initramfs.cpio
SERVER_INITRAMFS := $(BUILD)/initramfs-server.cpio
GUEST_BIN := $(BUILD)/guest-bin
FRAGMENTS := tests/config/base.config tests/config/network.config tests/config/test.config
BOOT := tests/qemu/boot.sh

DEB_PACKAGES := linux-source-6.1 qemu-system-x86 busybox-static iproute2 ethtool \
	gcc make flex bison bc libelf-dev libssl-dev cpio ccache libmnl-dev \
	pkg-config python3 git rsync kmod dwarves xz-utils dpkg-dev patch \
	cppcheck clang-tidy nbd-server nbd-client gnuplot-nox

GUEST_PROGS := $(patsubst tests/progs/%.c,$(GUEST_BIN)/%,$(wildcard tests/progs/*.c))
PREFIX ?= /usr/local

.PHONY: help deps tree export kernel host-progs iproute2 netreserve tool-check install stock-tree stock-kernel bench-kernels debug-kernel initramfs guest-progs \
	check check-debug check-series guest-check harness-selftest pressure bench soak run guest-run shell clean distclean

help:
	@echo "make run          build everything and show the feature in a QEMU guest"
	@echo "make check        build everything and run every test suite"
	@echo "make deps         install the Debian packages this needs (apt)"
	@echo "make tree         extract linux-source-6.1 to build/linux and apply the series"
	@echo "make export       write build/linux's commits back to the series folders"
	@echo "make kernel       build the patched test kernel (build/kernel)"
	@echo "make stock-kernel build stock 6.1 with the same configuration (build/kernel-stock)"
	@echo "make debug-kernel build the patched kernel with tests/config/debug.config"
	@echo "make iproute2     build Debian's iproute2 with the project's patch (the guest's ip)"
	@echo "make initramfs    build the guest's initramfs"
	@echo "make check-series checkpatch, then build after each patch of the series, feature on and off"
	@echo "make pressure     swap over NBD while flooded: patched, rx_reserve 0 and stock 6.1 side by side"
	@echo "make bench        RX fast path, patched against stock 6.1: medians and ratios (build/bench/)"
	@echo "make soak DURATION=S  pressure, flood, link flaps, rx_reserve and MTU changes for S seconds (600)"
	@echo "make check-debug  the guest suites on the debug kernel (KASAN, lockdep, kmemleak)"
	@echo "make netreserve   build the netreserve tool (userspace-tool/)"
	@echo "make tool-check   the tool's unit tests (ASan, UBSan), cppcheck and clang-tidy"
	@echo "make install      install netreserve and its man page under PREFIX (/usr/local)"
	@echo "make guest-run SCRIPT=FILE   run FILE as root in the guest"
	@echo "make shell        an interactive root shell in the guest"
	@echo "make clean        remove outputs (keeps build/linux and ccache); distclean: all of build/"

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "deps: all packages present"; else \
		echo "deps: installing $$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -q && apt-get install -y -q --no-install-recommends $$missing; \
	fi

tree: deps
	@scripts/tree.sh

export:
	@scripts/export.sh

kernel: tree
	@scripts/build-kernel.sh $(KSRC) $(KOUT) $(FRAGMENTS)

debug-kernel: tree
	@scripts/build-kernel.sh $(KSRC) $(DEBUG_OUT) $(FRAGMENTS) tests/config/debug.config

# Stock 6.1: a worktree of the pristine commit, same configuration.
stock-tree: tree
	@if [ ! -d $(STOCK_SRC) ]; then \
		echo "stock-kernel: checking out the pristine source in $(STOCK_SRC)"; \
		git -C $(KSRC) worktree add -f --detach $(STOCK_SRC) pristine >/dev/null; fi

stock-kernel: stock-tree
	@ALLOW_UNKNOWN=1 scripts/build-kernel.sh $(STOCK_SRC) $(STOCK_OUT) $(FRAGMENTS)

# make bench measures what users build: the feature on, its debug and test
# hooks off, and stock 6.1 with the same fragments.
BENCH_FRAGMENTS := tests/config/base.config tests/config/network.config tests/config/bench.config
bench-kernels: tree stock-tree
	@scripts/build-kernel.sh $(KSRC) $(BUILD)/kernel-bench $(BENCH_FRAGMENTS)
	@ALLOW_UNKNOWN=1 scripts/build-kernel.sh $(STOCK_SRC) $(BUILD)/kernel-stock-bench $(BENCH_FRAGMENTS)

$(GUEST_BIN)/%: tests/progs/%.c $(wildcard tests/common/*.h)
	@mkdir -p $(GUEST_BIN)
	gcc -static -O2 -Wall -Wextra -Werror -o $@ $<

guest-progs: $(GUEST_PROGS)

# Host-side programs: the pressure test's flood (sends to 127.0.0.1 only).
HOST_PROGS := $(patsubst tests/host/%.c,$(BUILD)/host/%,$(wildcard tests/host/*.c))
$(BUILD)/host/%: tests/host/%.c $(wildcard tests/common/*.h)
	@mkdir -p $(BUILD)/host
	gcc -O2 -Wall -Wextra -Werror -pthread -o $@ $<

host-progs: $(HOST_PROGS)

# The tool, built against the host's libmnl; the guest gets it with its
# libraries, as it gets ip.
netreserve: deps
	@$(MAKE) --no-print-directory -C userspace-tool
	@mkdir -p $(GUEST_BIN)
	@cp userspace-tool/netreserve $(GUEST_BIN)/netreserve

tool-check: deps
	@$(MAKE) --no-print-directory -C userspace-tool check lint

install: netreserve
	@$(MAKE) --no-print-directory -C userspace-tool install PREFIX=$(PREFIX)

# Debian's iproute2 with the project's patch: the guest's `ip`.
iproute2: deps
	@scripts/iproute2.sh

initramfs: tree guest-progs iproute2 netreserve
	@scripts/initramfs.sh $(INITRAMFS)
	@scripts/initramfs.sh $(SERVER_INITRAMFS) --server
	@scripts/initramfs.sh $(BUILD)/initramfs-nbd-client.cpio --nbd-client

guest-check: kernel initramfs
	@$(BOOT) --mode check --log $(BUILD)/logs/check.log

harness-selftest: kernel initramfs
	@tests/harness-selftest.sh

# The strict pressure runs of make check: swap over NBD on the patched
# kernel while the host floods the virtio-net link (where stock 6.1 stalled
# and the patched kernel's reserve delivered NBD's replies), with every
# normal RX allocation of that NIC failing (the worst case: natural memory
# pressure reaches the reserve in some runs only); fails unless swap moved
# both ways, the flood was received, the reserve was used and every byte
# came back.  At MTU 1500 (mergeable buffers) and 9000 (big mode, where
# without patch 0017 the device's transmit copies ran out of memory and
# every kernel stalled).  The deadline bounds the run, boot included: the
# big-mode run took 618 s on 2026-12-06 alone on this 2-core host and 903 s
# (its workload done at 809 s, past the 900 s deadline then) with a kernel
# build beside it; the MTU 1500 run 300-330 s.
PRESSURE_CHECK := PRESSURE_STRICT=1 PRESSURE_KERNELS=patched PRESSURE_LINKS='eth1:1500 eth1:9000:big' \
	PRESSURE_FLOODS=on PRESSURE_REPS=1 PRESSURE_DEADLINE=1200 PRESSURE_RATE=20000 PRESSURE_FORCE=1
# Swap over NVMe/TCP while the server drops the controller for 5 s: the
# reconnect must complete although every reclaimer waits for the swap
# device (patch 0041; without it the reconnect waited in reclaim for good).
NVME_RECONNECT_CHECK := PRESSURE_STRICT=1 PRESSURE_KERNELS=patched PRESSURE_CLIENTS=nvme \
	PRESSURE_NVME_OUTAGE=5 PRESSURE_LINKS=eth0:1500 PRESSURE_FLOODS=off PRESSURE_DEADLINE=300
# A user-space NBD client (nr-nbd relay: a Unix socketpair to the kernel,
# TCP to the server, both marked SO_MEMALLOC by the client itself) on e1000
# at MTU 1500, every normal RX allocation forced to fail: all replies come
# through the share, and out-of-order segments are bounded (0042).  With
# 0001-0046 its sends waited in direct reclaim for their own write-out and
# the run stalled; with 0047 it completes in about 65 s here.
RELAY_CHECK := PRESSURE_STRICT=1 PRESSURE_KERNELS=patched PRESSURE_CLIENTS=relay \
	PRESSURE_LINKS=eth0:1500 PRESSURE_FLOODS=on PRESSURE_REPS=1 PRESSURE_DEADLINE=600 PRESSURE_FORCE=1

# virtio-net with 4 queue pairs on a multi-queue tap in a network namespace
# of its own (boot.sh --topology tap-mq, root needed): 200 datagrams a
# second to a memalloc socket's port, which the tap steers to RX queue 3,
# and on the guest's cue a flood to ports it steers to queues 0-2.
MQ_BOOT := --mode check --tests /tests/virtio-mq --topology tap-mq \
	--tap-send '-m udp-idle -P 7003 -r 200' \
	--tap-flood '-m udp-idle,udp-closed,syn,frag -P 7000 -X 4:3 -r 10000'

# Not $(MAKE) in check's recipe: make runs a recipe line that names $(MAKE)
# even under "make -n", and check's one line is the whole test run.
SUBMAKE := make
check: kernel initramfs host-progs
	@scripts/check.sh \
		"tool=$(SUBMAKE) --no-print-directory -C userspace-tool check lint" \
		"guest=$(BOOT) --mode check --timeout 2400 --append nr_updown_cycles=100 \
			--log $(BUILD)/logs/check.log" \
		"virtio-small&=$(BOOT) --mode check --tests /tests/virtio-modes --virtio mrg_rxbuf=off \
			--append nr_virtio_mode=small --log $(BUILD)/logs/virtio-small.log" \
		"virtio-big&=$(BOOT) --mode check --tests /tests/virtio-big --virtio mrg_rxbuf=off,host_mtu=9000 \
			--append 'nr_virtio_mode=big nr_updown_cycles=100' --log $(BUILD)/logs/virtio-big.log" \
		"virtio-mq=$(BOOT) $(MQ_BOOT) --log $(BUILD)/logs/virtio-mq.log" \
		"harness=tests/harness-selftest.sh" \
		"pressure=$(PRESSURE_CHECK) PRESSURE_OUT=$(BUILD)/pressure-check scripts/pressure.sh" \
		"nvme-reconnect=$(NVME_RECONNECT_CHECK) PRESSURE_OUT=$(BUILD)/nvme-reconnect-check scripts/pressure.sh" \
		"pressure-relay=$(RELAY_CHECK) PRESSURE_OUT=$(BUILD)/relay-check scripts/pressure.sh"

# The debug kernel (KASAN, PROVE_LOCKING, kmemleak scanned at the end,
# DEBUG_ATOMIC_SLEEP; hung-task and soft-lockup panics, panic on warn, as
# every boot): the guest suites with fewer cycles, KASAN being slow under
# TCG.  The pressure run on this kernel is not part of it for now: with the
# host flood and the reserve path forced, the client stalled out of memory
# at 160 and 256 MiB (KASAN reserves 40% of the guest's pages) and crawled
# at 384 MiB (8 MiB of swap in 100 s).  With patches 0015-0018 it runs
# 33 s at 160 MiB instead of 1 s, then stalls with 0 kB free: under KASAN
# the reserve's skb heads and extensions keep far more slab pages than the
# estimate counts (README, debug kernel).  Run it by hand with
# PRESSURE_KERNELS=debug.
DEBUG_BZIMAGE := $(DEBUG_OUT)/arch/x86/boot/bzImage
check-debug: debug-kernel initramfs host-progs
	@scripts/check.sh \
		"guest-debug=$(BOOT) --kernel $(DEBUG_BZIMAGE) --mode check --timeout 5400 \
			--append 'nr_updown_cycles=10 nr_e1000_cycles=10 nr_mtu_cycles=10' \
			--log $(BUILD)/logs/check-debug.log" \
		"virtio-small-debug&=$(BOOT) --kernel $(DEBUG_BZIMAGE) --mode check --timeout 3600 \
			--tests /tests/virtio-modes --virtio mrg_rxbuf=off \
			--append 'nr_virtio_mode=small nr_updown_cycles=10' --log $(BUILD)/logs/check-debug-small.log" \
		"virtio-big-debug=$(BOOT) --kernel $(DEBUG_BZIMAGE) --mode check --timeout 3600 \
			--tests /tests/virtio-big --virtio mrg_rxbuf=off,host_mtu=9000 \
			--append 'nr_virtio_mode=big nr_updown_cycles=10' --log $(BUILD)/logs/check-debug-big.log" \
		"virtio-mq-debug=$(BOOT) --kernel $(DEBUG_BZIMAGE) $(MQ_BOOT) --timeout 1200 \
			--log $(BUILD)/logs/check-debug-mq.log"

# Not part of check: about two minutes per run; by default 4 links x 3
# kernels, flooded and not: about 50 minutes (build/pressure/report.md).
pressure: kernel stock-kernel initramfs host-progs
	@scripts/pressure.sh

DURATION ?= 600
soak: kernel initramfs host-progs
	@scripts/soak.sh $(DURATION)

# Not part of check: 2 x BENCH_REPS (5) boots under icount and as many
# for the throughput table, each about a minute.
bench: bench-kernels initramfs host-progs
	@$(MAKE) --no-print-directory deps DEB_PACKAGES=gnuplot-nox
	@scripts/bench.sh

check-series: tree
	@scripts/check-series.sh

run: kernel initramfs
	@$(BOOT) --mode run --log $(BUILD)/logs/run.log --timeout 600

guest-run: kernel initramfs
	@[ -n "$(SCRIPT)" ] || { echo "guest-run: say which script: make guest-run SCRIPT=FILE" >&2; exit 2; }
	@$(BOOT) --mode script --script "$(SCRIPT)" --log $(BUILD)/logs/guest-run.log

shell: kernel initramfs
	@$(BOOT) --mode shell

clean:
	$(MAKE) -C userspace-tool clean
	rm -rf $(KOUT) $(STOCK_OUT) $(DEBUG_OUT) $(GUEST_BIN) $(INITRAMFS) $(BUILD)/logs $(BUILD)/tools \
		$(BUILD)/iproute2/applied.sha256 \
		$(BUILD)/passwd $(BUILD)/group

distclean:
	rm -rf $(BUILD)
