/* SPDX-License-Identifier: MIT */
/*
 * nowait-hook.h: the door through which the project's own programs reach
 * the engine beyond include/nowait.h: the preload library (preload/, the
 * io_uring route and the pipe spinner) and nowait-bench (bench/). Nothing
 * outside src/ includes the engine's own headers (the .h files of src/):
 * what it needs of the engine is declared here and implemented in
 * src/hook.c, which only calls into the engine.
 *
 * A private contract, not an API: `make install` does not install this
 * header, and the functions may change with any commit. They are hidden
 * symbols (-fvisibility=hidden): they link from libnowait.a (the bench)
 * and within libnowait-preload.so (built from the engine's objects), and
 * neither libnowait.so nor the preload exports them.
 */
#ifndef NOWAIT_HOOK_H
#define NOWAIT_HOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * io_uring_enter with the system call's long result, as the kernel
 * returns it: an SQPOLL ring's to_submit in full, even past INT_MAX
 * (nowait_enter's int holds it at INT_MAX).
 */
long nowait_hook_enter(int fd, unsigned int to_submit,
		       unsigned int min_complete, unsigned int flags,
		       const void *arg, size_t argsz);

/*
 * The program's mmap calls come through nowait_hook_mmap from now on (the
 * preload's interposer, at load): a NO_MMAP ring may then register
 * IOU_PBUF_RING_MMAP rings, whose pages its ring fd cannot show.
 */
void nowait_hook_mmap_routed(void);
/*
 * mmap of fd at off, an IORING_OFF_PBUF_RING offset (the interposer,
 * before the real call): 0 when the real mmap serves it; 1 when the
 * engine mapped it (fd is a NO_MMAP ring), *res the mapping; -errno when
 * the engine refused it.
 */
int nowait_hook_mmap(void *addr, size_t len, int prot, int flags, int fd,
		     uint64_t off, void **res);

/* Does fd name a nowait ring? Cheap (a bitmap) unless it ever did. */
bool nowait_hook_is_ring_fd(int fd);

/*
 * Does fd name a nowait ring? Always the full look-up (an fstat), which
 * marks the number in nowait_hook_is_ring_fd's bitmap when it does: for
 * a new copy of a ring fd (dup) and a call that failed on one (EPERM).
 */
bool nowait_hook_ring_fd_learn(int fd);

/*
 * Requests the engine reissued because their fd became ready while they
 * were being parked (the reissue on a readiness race), process-wide.
 */
unsigned long nowait_hook_reissue_count(void);

/*
 * CPU pressure as the engine's spin policy sees it (src/pressure.c): true
 * when runnable tasks waited for a CPU a good part of the last ~20 ms.
 * now_ns: CLOCK_MONOTONIC now, which the caller has at hand.
 */
bool nowait_hook_cpu_busy(uint64_t now_ns);
/* The last verdict, without looking at the clock (may be stale). */
bool nowait_hook_cpu_busy_cached(void);
/*
 * The calling thread's own view (src/pressure.c): true while it waited for
 * a CPU (schedstat run_delay) more than a tenth of a recent ~5 ms window,
 * and for 50 ms after; false on kernels without schedstat.
 */
bool nowait_hook_thread_queued(uint64_t now_ns);
/*
 * Keep the pressure state in a shared page from now on, so that the
 * processes this one forks sample the pressure together (one sample per
 * interval between them, not one each). Call it before forking.
 */
void nowait_hook_pressure_share(void);

/*
 * The program is about to close fd, or make the number name another file
 * (the close, dup2 and dup3 interposers, before the real call): the
 * engine forgets the number and keeps the file of what is parked on it
 * (nowait_fd_closing in nowait.h). One load for an fd it never saw.
 */
void nowait_hook_fd_closing(int fd);
/* The same for [first, last] (close_range without CLOSE_RANGE_CLOEXEC). */
void nowait_hook_fd_range_closing(unsigned int first, unsigned int last);

/*
 * The program wrote to an fd (write, writev, eventfd_write interposers,
 * after the real call): what it made ready for a POLL_ADD is harvested
 * now, as the kernel's wake-up runs inside the write (its task work
 * before the write returns; on DEFER_TASKRUN rings, IORING_SQ_TASKRUN).
 * One load while no POLL_ADD is parked.
 */
void nowait_hook_wrote(void);

/*
 * The program is about to exec (the preload's exec interposers): a
 * forked child's requests in flight on its parent's ring are cancelled
 * and their CQEs posted first, as the kernel does at exec (docs/fork.md).
 */
void nowait_hook_exec(void);

/*
 * Does the ring of pollfd (nowait_ring_pollfd) still have an fd or a
 * mapping of the program's? 1, 0 (the kernel would have released the
 * ring's file, and with it its epoll registrations) or -errno. Costs a
 * readlink, and a scan of /proc/self when the answer is no.
 */
int nowait_hook_ring_pollfd_referenced(int pollfd);

/*
 * Epoll fd fd holds a ring fd (on) or no longer does: its wake-ups come
 * from CQ posts, and a multishot poll of the engine's on it turns oneshot
 * at its first, as the kernel's does on EPOLL_URING_WAKE.
 */
void nowait_hook_uring_wake_fd(int fd, bool on);

#endif /* NOWAIT_HOOK_H */
