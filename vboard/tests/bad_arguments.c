/*
 * bad_arguments.c -- the virtual board refuses bad ioctl arguments with the errno
 * linux-gpib's kernel layer gives, and never crashes: null and unmapped pointers,
 * buffers shorter than their count, huge counts, bad handles, requests it does not
 * know, requests made without the board lock, and board files out of range.
 *
 * Run with LD_PRELOAD=libgpib_vboard.so on a board gpib_config brought online
 * (vboard/ci.sh); prints one line per check and exits 1 on the first wrong answer.
 */
#include <stdint.h>
#include <gpib/gpib_ioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

static int failures;

static void expect(const char *what, int ret, int want_errno)
{
	int got = ret < 0 ? errno : 0;
	if (got != want_errno) {
		printf("FAIL %s: errno %d (%s), expected %d (%s)\n", what, got, strerror(got),
		       want_errno, strerror(want_errno));
		failures++;
	} else {
		printf("ok   %s: %s\n", what, want_errno ? strerror(want_errno) : "accepted");
	}
}

int main(void)
{
	int fd = open("/dev/gpib0", O_RDWR);
	if (fd < 0) {
		perror("open /dev/gpib0");
		return 1;
	}
	/* A page that is not mapped: a buffer that ends there is short. */
	char *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	munmap(page + 4096, 4096);
	char *short_buf = page + 4096 - 16;

	int lock = 1, unlock = 0;
	expect("IBMUTEX unlock without the lock", ioctl(fd, IBMUTEX, &unlock), EPERM);
	read_write_ioctl_t rw = { 0 };
	rw.buffer_ptr = (uintptr_t)page;
	rw.requested_transfer_count = 1;
	expect("IBWRT without the lock", ioctl(fd, IBWRT, &rw), EPERM);
	expect("an unknown request without the lock", ioctl(fd, _IO(GPIB_CODE, 99)), EPERM);

	expect("IBMUTEX lock", ioctl(fd, IBMUTEX, &lock), 0);
	expect("an unknown request", ioctl(fd, _IO(GPIB_CODE, 99)), ENOTTY);
	expect("a request of another driver", ioctl(fd, _IOR('T', 1, int), &lock), ENOTTY);
	expect("IBRD with a null argument", ioctl(fd, IBRD, NULL), EFAULT);
	expect("IBWAIT with an unmapped argument", ioctl(fd, IBWAIT, page + 4096), EFAULT);

	rw = (read_write_ioctl_t){ 0 };
	rw.buffer_ptr = 0;
	rw.requested_transfer_count = 100;
	expect("IBRD into a null buffer", ioctl(fd, IBRD, &rw), EFAULT);
	rw.buffer_ptr = (uintptr_t)short_buf;
	rw.requested_transfer_count = 1u << 31;
	rw.end = 1;
	expect("IBWRT of 2 GiB from a 16-byte buffer", ioctl(fd, IBWRT, &rw), EFAULT);
	rw.requested_transfer_count = 64;
	expect("IBRD of 64 bytes into 16", ioctl(fd, IBRD, &rw), EFAULT);
	expect("IBCMD of 64 bytes from 16", ioctl(fd, IBCMD, &rw), EFAULT);
	rw.requested_transfer_count = 4;
	rw.completed_transfer_count = 8;
	expect("IBRD with more done than asked", ioctl(fd, IBRD, &rw), EINVAL);
	rw.completed_transfer_count = 0;
	rw.handle = 4096;
	expect("IBRD on handle 4096", ioctl(fd, IBRD, &rw), EINVAL);
	rw.handle = -1;
	expect("IBWRT on handle -1", ioctl(fd, IBWRT, &rw), EINVAL);
	rw.handle = 7;
	expect("IBCMD on a handle never opened", ioctl(fd, IBCMD, &rw), EINVAL);

	wait_ioctl_t w = { 0 };
	w.handle = 12;
	w.wait_mask = 0x100;
	expect("IBWAIT on a handle never opened", ioctl(fd, IBWAIT, &w), EINVAL);
	close_dev_ioctl_t c = { 5000 };
	expect("IBCLOSEDEV of handle 5000", ioctl(fd, IBCLOSEDEV, &c), EINVAL);
	pad_ioctl_t pad = { 0, 31 };
	expect("IBPAD 31 on the board", ioctl(fd, IBPAD, &pad), EPERM);
	sad_ioctl_t sad = { 0, 31 };
	expect("IBSAD 31 on the board", ioctl(fd, IBSAD, &sad), EPERM);
	eos_ioctl_t eos = { 0x0a, 0x8000 };
	expect("IBEOS with an unknown flag", ioctl(fd, IBEOS, &eos), EINVAL);
	serial_poll_ioctl_t sp = { 31, -1, 0 };
	expect("IBRSP of address 31", ioctl(fd, IBRSP, &sp), EPERM);
	online_ioctl_t on = { 0, 0, 1 };
	expect("IBONL online when online", ioctl(fd, IBONL, &on), EBUSY);
	board_type_ioctl_t bt;
	memset(&bt, 0, sizeof bt);
	strcpy(bt.name, "ni_pci");
	expect("CFCBOARDTYPE while online", ioctl(fd, CFCBOARDTYPE, &bt), EBUSY);
	autospoll_ioctl_t off = 0;
	expect("IBAUTOSPOLL off before on", ioctl(fd, IBAUTOSPOLL, &off), EINVAL);

	/* Still working after all that: a device opened and closed. */
	open_dev_ioctl_t od = { 0 };
	od.pad = 22;
	od.sad = -1;
	expect("IBOPENDEV of pad 22", ioctl(fd, IBOPENDEV, &od), 0);
	c.handle = od.handle;
	expect("IBCLOSEDEV of it", ioctl(fd, IBCLOSEDEV, &c), 0);
	expect("IBCLOSEDEV of it again", ioctl(fd, IBCLOSEDEV, &c), EINVAL);
	expect("IBMUTEX unlock", ioctl(fd, IBMUTEX, &unlock), 0);
	close(fd);

	expect("ioctl on the closed file", ioctl(fd, IBMUTEX, &lock), EBADF);
	expect("open /dev/gpib16", open("/dev/gpib16", O_RDWR), ENOENT);
	if (failures) {
		printf("%d check(s) failed\n", failures);
		return 1;
	}
	printf("all checks passed\n");
	return 0;
}
