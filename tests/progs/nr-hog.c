// SPDX-License-Identifier: GPL-2.0
/*
 * nr-hog: the pressure test's workload.
 *
 *   nr-hog MIB [PROGRESS_FILE]
 *
 * Maps MIB of anonymous memory, writes a pattern that depends on each
 * word's address to every page (forcing the pages out to swap once MIB is
 * past RAM), then reads everything back and checks it.  Prints
 * "nr-hog: verified N bytes of T, M differ in S s" (N: the bytes that came
 * back right, M: the bytes in 8-byte words that did not) and exits 0 only
 * if nothing differs.  PROGRESS_FILE, rewritten every MiB, holds "PHASE MIB_DONE" for
 * a sampler: the MiB written, then written and verified (up to 2 * MIB).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MIB (1UL << 20)

static uint64_t pattern(uint64_t word)
{
	return (word + 1) * 0x9e3779b97f4a7c15ULL;
}

static void progress(int fd, const char *phase, unsigned long done)
{
	char line[64];
	int n;

	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%s %lu\n", phase, done);
	if (pwrite(fd, line, n, 0) == n)
		(void)ftruncate(fd, n);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long mib, i, w, differ = 0;
	const unsigned long words = MIB / sizeof(uint64_t);
	uint64_t *mem;
	double start;
	int fd = -1;

	if (argc < 2 || argc > 3 || !(mib = strtoul(argv[1], NULL, 0))) {
		fprintf(stderr, "usage: nr-hog MIB [PROGRESS_FILE]\n");
		return 2;
	}
	if (argc == 3 && (fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0) {
		fprintf(stderr, "nr-hog: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	mem = mmap(NULL, mib * MIB, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "nr-hog: mmap %lu MiB: %s\n", mib, strerror(errno));
		return 1;
	}
	start = now();
	for (i = 0; i < mib; i++) {
		for (w = i * words; w < (i + 1) * words; w++)
			mem[w] = pattern(w);
		progress(fd, "write", i + 1);
	}
	printf("nr-hog: wrote %lu MiB in %.1f s\n", mib, now() - start);
	fflush(stdout);
	for (i = 0; i < mib; i++) {
		for (w = i * words; w < (i + 1) * words; w++)
			differ += mem[w] != pattern(w);
		progress(fd, "verify", mib + i + 1);
	}
	/* Verified counts only what came back right. */
	printf("nr-hog: verified %lu bytes of %lu, %lu differ in %.1f s\n",
	       mib * MIB - differ * sizeof(uint64_t), mib * MIB,
	       differ * sizeof(uint64_t), now() - start);
	return differ != 0;
}
