/* SPDX-License-Identifier: MIT */
/*
 * The door of include/nowait-hook.h: what the preload library and the
 * bench need of the engine beyond include/nowait.h. Each function only
 * calls into the engine; no logic lives here.
 */
#include <nowait-hook.h>
#include "internal.h"
#include "fdcache.h"
#include "kbuf.h"
#include "poll.h"
#include "pressure.h"
#include "reactor.h"
#include "ringmem.h"
#include "ringpoll.h"

long nowait_hook_enter(int fd, unsigned int to_submit,
		       unsigned int min_complete, unsigned int flags,
		       const void *arg, size_t argsz)
{
	return nw_enter(fd, to_submit, min_complete, flags, arg, argsz);
}

bool nowait_hook_is_ring_fd(int fd)
{
	return nw_is_ring_fd(fd);
}

unsigned long nowait_hook_reissue_count(void)
{
	return nw_stat_reissue();
}

bool nowait_hook_cpu_busy(uint64_t now_ns)
{
	return nw_cpu_busy(now_ns);
}

bool nowait_hook_cpu_busy_cached(void)
{
	return nw_cpu_busy_cached();
}

bool nowait_hook_thread_queued(uint64_t now_ns)
{
	return nw_thread_queued(now_ns);
}

void nowait_hook_pressure_share(void)
{
	nw_pressure_share();
}

/*
 * The close hooks count as engine code while they run: a write of a
 * signal handler meanwhile must not harvest (nowait_hook_wrote) under
 * the poll_lock they hold.
 */
void nowait_hook_fd_closing(int fd)
{
	if (nw_in_engine) /* the engine's own close (internal.h) */
		return;
	nw_in_engine++;
	nw_ring_fd_closing(fd);
	nw_poll_fd_closing(fd);
	nw_in_engine--;
}

void nowait_hook_exec(void)
{
	nw_in_engine++;
	nw_fork_task_exit();
	nw_in_engine--;
}

void nowait_hook_wrote(void)
{
	nw_reactor_sync_wake(false);
}

void nowait_hook_fd_range_closing(unsigned int first, unsigned int last)
{
	if (nw_in_engine)
		return;
	nw_in_engine++;
	for (unsigned int fd = first; fd <= last && fd < 4096; fd++)
		nw_ring_fd_closing((int)fd);
	nw_fd_file_hint_clear_range(first, last);
	nw_poll_fd_range_closing(first, last);
	nw_in_engine--;
}

int nowait_hook_ring_pollfd_referenced(int pollfd)
{
	return nw_ring_watch_referenced(pollfd);
}

void nowait_hook_mmap_routed(void)
{
	nw_ringmem_mmap_routed();
}

int nowait_hook_mmap(void *addr, size_t len, int prot, int flags, int fd,
		     uint64_t off, void **res)
{
	return nw_kbuf_mmap(fd, addr, len, prot, flags, off, res);
}

bool nowait_hook_ring_fd_learn(int fd)
{
	struct nw_ring *ring;

	return nw_ring_lookup(fd, &ring) == 0;
}

void nowait_hook_uring_wake_fd(int fd, bool on)
{
	nw_fd_set_uring_wake(fd, on);
}
