// SPDX-License-Identifier: GPL-2.0
/*
 * nr-icount: the guest instructions one received packet costs, for make
 * bench under QEMU's "-icount shift=0" (one vCPU).
 *
 *   nr-icount IFACE PORT CALIBRATE_MS QUIET_MS
 *
 * With icount, the guest's clock is an instruction counter: every
 * instruction the vCPU executes advances CLOCK_MONOTONIC by exactly 1 ns,
 * and nothing else does.  So a host that is busy or idle, fast or slow,
 * changes how many packets arrive, never how many instructions each one
 * took.
 *
 * To tell the packets' instructions from everything else (timer ticks,
 * this program), a soak child at SCHED_IDLE counts loop iterations in
 * shared memory whenever nothing else wants the CPU, so the vCPU never
 * halts.  First, with no traffic, CALIBRATE_MS of guest time say how many
 * iterations the soak gets per nanosecond when only the background runs.
 * Then "nr-icount-ready" goes to stdout, the host floods the NIC, and this
 * program reads IFACE's rx_packets and drains the UDP socket on PORT every
 * 10 ms of guest time.  The window runs from the first sample in which
 * rx_packets moved to the last one in which it moved; QUIET_MS without a
 * move ends it.  Over the window
 *
 *     packet work = elapsed ns - soak iterations / (iterations per ns idle)
 *
 * i.e. the instructions the soak would have run had no packet come, minus
 * the ones it did run.  Divided by the packets the NIC received, that is
 * the cost of one packet through driver, stack and the socket's reader.
 * The result line:
 *
 *   nr-icount iface=IFACE packets=N delivered=D window_ns=W work_ns=X
 *             per_packet=P soak_share=S
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SAMPLE_MS 10
#define BATCH 64

struct sample {
	uint64_t ns, soak, rx;
};

static volatile uint64_t *soak_count;
static int rx_packets_fd;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "nr-icount: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t read_rx_packets(void)
{
	char buf[32];
	ssize_t n = pread(rx_packets_fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		die("rx_packets");
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

static struct sample take_sample(void)
{
	struct sample s = { .ns = now_ns(), .soak = *soak_count };

	s.rx = read_rx_packets();
	return s;
}

/* Runs only when nothing else wants the CPU; never returns. */
static void soak(void)
{
	struct sched_param param = { 0 };

	if (sched_setscheduler(0, SCHED_IDLE, &param))
		die("SCHED_IDLE");
	for (;;)
		(*soak_count)++;
}

/* Reads whatever is queued; returns the datagrams read. */
static unsigned int drain(int fd)
{
	static char bufs[BATCH][2048];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	unsigned int total = 0;
	int i, n;

	for (i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
		msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
	}
	while ((n = recvmmsg(fd, msgs, BATCH, MSG_DONTWAIT, NULL)) > 0)
		total += n;
	return total;
}

/* Waits up to SAMPLE_MS for datagrams, reading them as they come. */
static unsigned int wait_a_sample(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t end = now_ns() + SAMPLE_MS * 1000000ull;
	unsigned int got = 0;
	int64_t left;

	while ((left = (int64_t)(end - now_ns())) > 0) {
		if (poll(&pfd, 1, (left + 999999) / 1000000) > 0)
			got += drain(fd);
	}
	return got;
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	struct sample cal_start, cal_end, first, last, s, prev;
	uint64_t calibrate_ms, quiet_ms, delivered = 0, window, soak_iters;
	double soak_per_ns, work;
	char path[128];
	int fd, rcvbuf = 32 << 20;
	pid_t child;

	if (argc != 5) {
		fprintf(stderr, "usage: nr-icount IFACE PORT CALIBRATE_MS QUIET_MS\n");
		return 2;
	}
	calibrate_ms = strtoull(argv[3], NULL, 10);
	quiet_ms = strtoull(argv[4], NULL, 10);
	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/rx_packets", argv[1]);
	rx_packets_fd = open(path, O_RDONLY);
	if (rx_packets_fd < 0)
		die(path);

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket");
	/*
	 * Room for whole bursts: a datagram the socket drops for want of
	 * buffer space takes a shorter path than one it queues, and how many
	 * do depends on how the host's frames happened to bunch up.
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		die("SO_RCVBUFFORCE");
	addr.sin_port = htons(atoi(argv[2]));
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)))
		die("bind");

	soak_count = mmap(NULL, sizeof(*soak_count), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (soak_count == MAP_FAILED)
		die("mmap");
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0)
		soak();

	/*
	 * Above ksoftirqd, so that the socket is read whenever it holds
	 * something and NAPI gets the CPU only when it is empty: every
	 * datagram the NIC passes up is queued and read, none is dropped for
	 * a full socket, and the ring (not the socket) is where a host that
	 * offers more than the guest can take loses frames.
	 */
	if (sched_setscheduler(0, SCHED_FIFO, &(struct sched_param){ .sched_priority = 1 }))
		die("SCHED_FIFO");

	/* Calibration: the same sampling loop, no traffic. */
	cal_start = take_sample();
	do {
		wait_a_sample(fd);
		cal_end = take_sample();
	} while (cal_end.ns - cal_start.ns < calibrate_ms * 1000000);
	if (cal_end.soak == cal_start.soak) {
		fprintf(stderr, "nr-icount: the soak never ran\n");
		return 1;
	}
	soak_per_ns = (double)(cal_end.soak - cal_start.soak) / (cal_end.ns - cal_start.ns);

	/*
	 * A marker, not for the disk: make bench's instruction profile
	 * (scripts/insn-profile.sh) snapshots its counters when the guest
	 * enters sync(2), here and at the end of the measurement.
	 */
	sync();
	printf("nr-icount-ready iface=%s\n", argv[1]);
	fflush(stdout);

	/* Wait for the first move, then sample until QUIET_MS without one. */
	prev = take_sample();
	for (;;) {
		wait_a_sample(fd);
		s = take_sample();
		if (s.rx != prev.rx)
			break;
		prev = s;
	}
	first = prev;
	last = s;
	while (s.ns - last.ns < quiet_ms * 1000000) {
		delivered += wait_a_sample(fd);
		s = take_sample();
		if (s.rx != last.rx)
			last = s;
	}
	delivered += drain(fd);
	sync();
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	window = last.ns - first.ns;
	soak_iters = last.soak - first.soak;
	work = window - soak_iters / soak_per_ns;
	printf("nr-icount iface=%s packets=%llu delivered=%llu window_ns=%llu work_ns=%.0f per_packet=%.1f soak_share=%.3f\n",
	       argv[1], (unsigned long long)(last.rx - first.rx),
	       (unsigned long long)delivered, (unsigned long long)window,
	       work, work / (last.rx - first.rx),
	       soak_iters / soak_per_ns / window);
	return 0;
}
