// SPDX-License-Identifier: GPL-2.0
/*
 * nr-sampler: the pressure test's once-a-second sample of the client.
 *
 *   nr-sampler NIC [SWAPDEV]
 *
 * Prints one line a second:
 *
 *   nr-sample t=S free_pages=N wmark_min=N swap_used_kb=N pswpin=N
 *             pswpout=N rx_packets=N rx_missed=N phase=P done_mib=N
 *             eth0_rx=N eth1_rx=N eth0_held=N ... (every counter of
 *             every device's RX reserve) cpu_total=N cpu_idle=N
 *             cpu_iowait=N cpu_irq=N
 *
 * rx_packets and rx_missed are NIC's (the flooded one); ethN_rx each
 * NIC's received packets.  The cpu_ fields are /proc/stat's ticks of all
 * CPUs since boot (cpu_irq: hard and soft interrupts, where a flood's
 * receive work runs): what the flood leaves to the workload.
 *
 * A shell loop forks a dozen processes a second, and a guest that is out
 * of memory cannot fork: its samples stop exactly when they matter.  This
 * one is locked in memory, forks nothing and reuses its buffers, so it
 * keeps telling whether the NIC still receives and the reserve still
 * moves while everything else is stuck.  pswpin/pswpout are 4 KiB pages
 * read from and written to SWAPDEV (default nbd0) since it was attached.
 *
 * When neither the workload nor swap I/O has moved for STALL_DUMP_AFTER
 * seconds, it prints "nr-stall-dump t=S", the swap device's requests in
 * flight, the NICs' and the stack's counters (TCP, ARP, devices), and
 * the first time asks the kernel (sysrq m, then t) for the memory state and
 * every task's stack: a stall in which no task stays blocked for the
 * hung-task timeout (reclaim that sleeps and retries, a work item that
 * never runs) leaves no other trace.  The counters are printed again every
 * STALL_DUMP_AFTER seconds while the stall lasts, to show what still moves,
 * and the third time the blocked tasks' stacks once more (sysrq w): work
 * that was only scheduled at the first dump (a controller's reconnect) has
 * run into whatever blocks it by then.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STALL_DUMP_AFTER 20

static char buf[16384];

/* The contents of @path in buf, or "" if it cannot be read. */
static const char *slurp(const char *path)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = 0;

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static unsigned long long number_in(const char *path)
{
	return strtoull(slurp(path), NULL, 10);
}

/* The number after "@key" (a line start and a separator) in buf. */
static unsigned long long field(const char *text, const char *key)
{
	const char *p = text;
	size_t len = strlen(key);

	while ((p = strstr(p, key))) {
		if ((p == text || p[-1] == '\n') && (p[len] == ' ' || p[len] == ':'))
			return strtoull(p + len + 1, NULL, 10);
		p += len;
	}
	return 0;
}

/* The sum of every zone's min watermark. */
static unsigned long long min_watermark(void)
{
	const char *p = slurp("/proc/zoneinfo");
	unsigned long long sum = 0;

	while ((p = strstr(p, "\n        min "))) {
		p += strlen("\n        min ");
		sum += strtoull(p, NULL, 10);
	}
	return sum;
}

/* The workload's progress files: the phase of the last, the MiB of all. */
static unsigned long long progress(char *phase, size_t size)
{
	unsigned long long done = 0;
	char path[64], word[16];
	int i;

	snprintf(phase, size, "none");
	for (i = 1; i <= 16; i++) {
		unsigned long long mib;

		snprintf(path, sizeof(path), "/tmp/hog.%d.progress", i);
		if (sscanf(slurp(path), "%15s %llu", word, &mib) == 2) {
			snprintf(phase, size, "%s", word);
			done += mib;
		}
	}
	return done;
}

static const char *const devs[] = { "eth0", "eth1" };

static void reserve_stats(void)
{
	static const char *const names[] = {
		"rx_reserve", "pages", "held", "peak", "alloc", "refused",
		"dropped", "delivered",
	};
	unsigned long long ifindex;
	struct stat netns;
	char path[96];
	size_t d, i;

	for (d = 0; d < sizeof(devs) / sizeof(devs[0]); d++) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/rx_packets", devs[d]);
		printf(" %s_rx=%llu", devs[d], number_in(path));
	}
	/* A device's folder is named after its network namespace's inode
	 * and its ifindex (names repeat across namespaces).
	 */
	if (stat("/proc/self/ns/net", &netns))
		return;
	for (d = 0; d < sizeof(devs) / sizeof(devs[0]); d++) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/ifindex", devs[d]);
		ifindex = number_in(path);
		snprintf(path, sizeof(path), "/sys/kernel/debug/rx_reserve/%lu-%llu/stats",
			 (unsigned long)netns.st_ino, ifindex);
		if (!ifindex || access(path, R_OK))
			continue;
		slurp(path);
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			printf(" %s_%s=%llu", devs[d], names[i], field(buf, names[i]));
	}
}

static void cpu_ticks(void)
{
	unsigned long long user, nice, system, idle, iowait, irq, softirq, steal;

	if (sscanf(slurp("/proc/stat"), "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &user, &nice, &system, &idle, &iowait, &irq, &softirq, &steal) != 8)
		return;
	printf(" cpu_total=%llu cpu_idle=%llu cpu_iowait=%llu cpu_irq=%llu",
	       user + nice + system + idle + iowait + irq + softirq + steal,
	       idle, iowait, irq + softirq);
}

static void sysrq(char key)
{
	int fd = open("/proc/sysrq-trigger", O_WRONLY);

	if (fd < 0 || write(fd, &key, 1) != 1)
		printf("nr-stall-dump: sysrq %c not available\n", key);
	if (fd >= 0)
		close(fd);
}

/* What the console needs to explain a stall, at its NTH dump. */
static void stall_dump(long t, const char *swapdev, int nth)
{
	/* A NIC that stopped delivering: dropped (no skb), missed (no ring
	 * buffer) or nothing arriving at all.
	 */
	static const char *const counters[] = {
		"rx_packets", "rx_dropped", "rx_errors", "rx_missed_errors",
		"rx_fifo_errors", "tx_packets",
	};
	char path[96];
	size_t d, i;

	snprintf(path, sizeof(path), "/sys/block/%s/inflight", swapdev);
	printf("nr-stall-dump t=%ld %s_inflight=%s", t, swapdev, slurp(path));
	for (d = 0; d < sizeof(devs) / sizeof(devs[0]); d++) {
		printf("nr-stall-dump %s", devs[d]);
		for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
			snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s",
				 devs[d], counters[i]);
			printf(" %s=%llu", counters[i], number_in(path));
		}
		printf("\n");
	}
	printf("%s", slurp("/proc/net/sockstat"));
	printf("%s", slurp("/proc/net/tcp"));
	printf("%s", slurp("/proc/net/snmp"));
	printf("%s", slurp("/proc/net/netstat"));
	printf("%s", slurp("/proc/net/arp"));
	printf("%s", slurp("/proc/net/stat/arp_cache"));
	printf("%s", slurp("/proc/net/dev"));
	if (nth == 1) {
		sysrq('m');
		sysrq('t');
	} else if (nth == 3) {
		sysrq('w');
	}
}

int main(int argc, char **argv)
{
	const char *nic = argc > 1 ? argv[1] : "eth0";
	const char *swapdev = argc > 2 ? argv[2] : "nbd0";
	char path[96], phase[16];
	unsigned long long last_progress = ~0ULL;
	struct timespec start, now;
	long still = 0;

	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		perror("nr-sampler: mlockall");
	/* Reading /proc and /sys allocates; in a stall, reclaim that may wait
	 * for swap I/O would stop the sampler exactly when it is needed.
	 */
	if (prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0))
		perror("nr-sampler: PR_SET_IO_FLUSHER");
	setvbuf(stdout, NULL, _IOLBF, 0);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		unsigned long long free_pages, swap_total, swap_free, rd, wr;
		unsigned long long rx, missed, done;

		clock_gettime(CLOCK_MONOTONIC, &now);
		free_pages = field(slurp("/proc/vmstat"), "nr_free_pages");
		slurp("/proc/meminfo");
		swap_total = field(buf, "SwapTotal");
		swap_free = field(buf, "SwapFree");
		snprintf(path, sizeof(path), "/sys/block/%s/stat", swapdev);
		rd = wr = 0;
		sscanf(slurp(path), "%*u %*u %llu %*u %*u %*u %llu", &rd, &wr);
		snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/rx_packets", nic);
		rx = number_in(path);
		snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/rx_missed_errors", nic);
		missed = number_in(path);
		done = progress(phase, sizeof(phase));
		printf("nr-sample t=%ld free_pages=%llu wmark_min=%llu swap_used_kb=%llu pswpin=%llu pswpout=%llu rx_packets=%llu rx_missed=%llu phase=%s done_mib=%llu",
		       (long)(now.tv_sec - start.tv_sec), free_pages, min_watermark(),
		       swap_total - swap_free, rd / 8, wr / 8, rx, missed, phase, done);
		reserve_stats();
		cpu_ticks();
		printf("\n");
		if (done + rd + wr != last_progress) {
			last_progress = done + rd + wr;
			still = 0;
		} else if (++still % STALL_DUMP_AFTER == 0) {
			stall_dump((long)(now.tv_sec - start.tv_sec), swapdev,
				   still / STALL_DUMP_AFTER);
		}
		sleep(1);
	}
}
