// SPDX-License-Identifier: GPL-2.0
/*
 * nr-hog: the pressure test's workload.
 *
 *   nr-hog MIB [PROGRESS_FILE [DEVICE OFFSET_MIB]]
 *
 * Maps MIB of anonymous memory, writes a pattern that depends on each
 * word's address to every page (forcing the pages out to swap once MIB is
 * past RAM), then reads everything back and checks it.  With DEVICE (a
 * block device or file), it maps MIB of DEVICE from OFFSET_MIB shared
 * instead: the pages are dirty page cache that writeback sends to the
 * device; before reading back it syncs them, unmaps them and drops them
 * from the page cache (fadvise, or BLKFLSBUF where the kernel has no
 * fadvise), so that every byte checked comes from the device.
 * Prints
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
#include <linux/fs.h>
#include <sys/ioctl.h>
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

/* Map MIB of DEVICE at OFFSET_MIB shared, or MIB of anonymous memory. */
static uint64_t *map_words(int dev, unsigned long mib, unsigned long offset_mib)
{
	uint64_t *mem;

	if (dev < 0)
		mem = mmap(NULL, mib * MIB, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	else
		mem = mmap(NULL, mib * MIB, PROT_READ | PROT_WRITE, MAP_SHARED,
			   dev, (off_t)offset_mib * MIB);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "nr-hog: mmap %lu MiB: %s\n", mib, strerror(errno));
		return NULL;
	}
	return mem;
}

/* Write the dirty pages out and forget them, so that reading them back
 * goes to the device and not to the page cache.
 */
static int write_out_and_drop(int dev, uint64_t *mem, unsigned long mib,
			      unsigned long offset_mib)
{
	int err;

	if (msync(mem, mib * MIB, MS_SYNC)) {
		fprintf(stderr, "nr-hog: msync: %s\n", strerror(errno));
		return -1;
	}
	munmap(mem, mib * MIB);
	err = posix_fadvise(dev, (off_t)offset_mib * MIB, (off_t)mib * MIB,
			    POSIX_FADV_DONTNEED);
	/* Kernels without ADVISE_SYSCALLS (tinyconfig): a block device's
	 * page cache goes with BLKFLSBUF, which writes out what is dirty
	 * and drops every clean page no one maps.
	 */
	if (err == ENOSYS)
		err = ioctl(dev, BLKFLSBUF, 0) ? errno : 0;
	if (err) {
		fprintf(stderr, "nr-hog: dropping the written pages: %s\n", strerror(err));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long mib, i, w, differ = 0, offset_mib = 0;
	const unsigned long words = MIB / sizeof(uint64_t);
	uint64_t *mem, base;
	int fd = -1, dev = -1;
	double start;

	if ((argc != 2 && argc != 3 && argc != 5) ||
	    !(mib = strtoul(argv[1], NULL, 0))) {
		fprintf(stderr, "usage: nr-hog MIB [PROGRESS_FILE [DEVICE OFFSET_MIB]]\n");
		return 2;
	}
	if (argc >= 3 && (fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0) {
		fprintf(stderr, "nr-hog: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	if (argc == 5) {
		offset_mib = strtoul(argv[4], NULL, 0);
		dev = open(argv[3], O_RDWR);
		if (dev < 0) {
			fprintf(stderr, "nr-hog: %s: %s\n", argv[3], strerror(errno));
			return 1;
		}
	}
	/* The pattern follows the word's place on the device, so that a page
	 * written to or read from the wrong place does not pass.
	 */
	base = (uint64_t)offset_mib * words;
	mem = map_words(dev, mib, offset_mib);
	if (!mem)
		return 1;
	start = now();
	for (i = 0; i < mib; i++) {
		for (w = i * words; w < (i + 1) * words; w++)
			mem[w] = pattern(base + w);
		progress(fd, "write", i + 1);
	}
	if (dev >= 0) {
		if (write_out_and_drop(dev, mem, mib, offset_mib))
			return 1;
		mem = map_words(dev, mib, offset_mib);
		if (!mem)
			return 1;
	}
	printf("nr-hog: wrote %lu MiB in %.1f s\n", mib, now() - start);
	fflush(stdout);
	for (i = 0; i < mib; i++) {
		for (w = i * words; w < (i + 1) * words; w++)
			differ += mem[w] != pattern(base + w);
		progress(fd, "verify", mib + i + 1);
	}
	/* Verified counts only what came back right. */
	printf("nr-hog: verified %lu bytes of %lu, %lu differ in %.1f s\n",
	       mib * MIB - differ * sizeof(uint64_t), mib * MIB,
	       differ * sizeof(uint64_t), now() - start);
	return differ != 0;
}
