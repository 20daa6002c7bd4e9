/* SPDX-License-Identifier: MIT */
/*
 * IORING_REGISTER_PERSONALITY, UNREGISTER_PERSONALITY and sqe->personality
 * (kernel io_uring/register.c, io_uring.c's io_init_req). Registering
 * saves the calling thread's credentials (real, effective and saved uid
 * and gid, supplementary groups) under a new id, allocated cyclically from
 * 1 as the kernel's xarray does; a request naming an id runs with them.
 *
 * The kernel overrides a request's credentials for the length of its
 * issue. In user space credentials are per thread at the system call
 * level (the raw setresuid, setresgid and setgroups calls change only the
 * calling thread; glibc's wrappers broadcast), so: a request whose
 * personality is the submitting thread's own credentials runs as any
 * other; one whose personality differs goes to a worker, which switches
 * its own credentials for the blocking issue and back. The switch keeps
 * a saved uid to switch back with (0 when the worker can be root, else
 * its own euid); when the worker may not take the credentials (an
 * unprivileged program), the request fails with -EINVAL.
 *
 * Locks: the table's own lock is a leaf; register calls hold reg_lock.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "creds.h"

#define NW_MAX_PERSONALITY 65535U /* USHRT_MAX: sqe->personality's range */

struct nw_creds {
	int refs;
	uid_t uid[3]; /* real, effective, saved */
	gid_t gid[3];
	int ngroups;
	gid_t groups[];
};

struct nw_creds_table {
	pthread_mutex_t lock;
	struct nw_creds **slot; /* by id; slot[0] unused */
	unsigned int nr;	/* slots allocated */
	unsigned int next;	/* where the cyclic allocation goes on */
};

/* The calling thread's credentials, as the kernel's get_current_cred. */
static struct nw_creds *creds_current(void)
{
	int n = (int)syscall(SYS_getgroups, 0, NULL);
	struct nw_creds *c;

	if (n < 0)
		return NULL;
	c = calloc(1, sizeof(*c) + (size_t)n * sizeof(gid_t));
	if (!c)
		return NULL;
	c->refs = 1;
	if (syscall(SYS_getresuid, &c->uid[0], &c->uid[1], &c->uid[2]) ||
	    syscall(SYS_getresgid, &c->gid[0], &c->gid[1], &c->gid[2]) ||
	    (c->ngroups = (int)syscall(SYS_getgroups, n, c->groups)) < 0) {
		free(c);
		return NULL;
	}
	return c;
}

static bool creds_equal(const struct nw_creds *a, const struct nw_creds *b)
{
	return !memcmp(a->uid, b->uid, sizeof(a->uid)) &&
	       !memcmp(a->gid, b->gid, sizeof(a->gid)) &&
	       a->ngroups == b->ngroups &&
	       !memcmp(a->groups, b->groups,
		       (size_t)a->ngroups * sizeof(gid_t));
}

void nw_creds_put(struct nw_creds *c)
{
	if (c && !__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL))
		free(c);
}

static struct nw_creds_table *table_get(struct nw_ring *ring)
{
	struct nw_creds_table *t =
		__atomic_load_n(&ring->pers, __ATOMIC_ACQUIRE);

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	t->next = 1;
	__atomic_store_n(&ring->pers, t, __ATOMIC_RELEASE);
	return t;
}

/* xa_alloc_cyclic over [1, 65535]: a free id from next on, wrapping. */
static int table_insert(struct nw_creds_table *t, struct nw_creds *c)
{
	for (unsigned int i = 0; i < NW_MAX_PERSONALITY; i++) {
		unsigned int id = (t->next - 1 + i) % NW_MAX_PERSONALITY + 1;

		if (id >= t->nr) {
			unsigned int nr = id < 32 ? 64 : id * 2;
			struct nw_creds **s;

			if (nr > NW_MAX_PERSONALITY + 1)
				nr = NW_MAX_PERSONALITY + 1;
			s = realloc(t->slot, nr * sizeof(*s));
			if (!s)
				return -ENOMEM;
			memset(s + t->nr, 0, (nr - t->nr) * sizeof(*s));
			t->slot = s;
			t->nr = nr;
		}
		if (!t->slot[id]) {
			t->slot[id] = c;
			t->next = id % NW_MAX_PERSONALITY + 1;
			return (int)id;
		}
	}
	return -EBUSY;
}

int nw_creds_register(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	struct nw_creds_table *t;
	struct nw_creds *c;
	int id;

	if (arg || nr_args)
		return -EINVAL;
	t = table_get(ring);
	c = t ? creds_current() : NULL;
	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&t->lock);
	id = table_insert(t, c);
	pthread_mutex_unlock(&t->lock);
	if (id < 0)
		nw_creds_put(c);
	return id;
}

int nw_creds_unregister(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	struct nw_creds_table *t =
		__atomic_load_n(&ring->pers, __ATOMIC_ACQUIRE);
	struct nw_creds *c = NULL;

	if (arg)
		return -EINVAL;
	if (!t)
		return -EINVAL;
	pthread_mutex_lock(&t->lock);
	if (nr_args < t->nr) {
		c = t->slot[nr_args];
		t->slot[nr_args] = NULL;
	}
	pthread_mutex_unlock(&t->lock);
	if (!c)
		return -EINVAL;
	nw_creds_put(c);
	return 0;
}

int nw_creds_attach(struct nw_req *req, unsigned int id)
{
	struct nw_creds_table *t =
		__atomic_load_n(&req->ring->pers, __ATOMIC_ACQUIRE);
	struct nw_creds *c = NULL, *cur;

	if (!t)
		return -EINVAL;
	pthread_mutex_lock(&t->lock);
	if (id < t->nr && t->slot[id]) {
		c = t->slot[id];
		__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&t->lock);
	if (!c)
		return -EINVAL;
	req->creds = c;
	req->flags |= NW_REQ_F_CREDS;
	cur = creds_current();
	if (!cur || !creds_equal(cur, c))
		req->flags |= NW_REQ_F_CREDS_SWITCH;
	nw_creds_put(cur);
	return 0;
}

/*
 * Become to. Root first where the thread can (one of its uids is 0: a
 * worker started by a thread that had dropped its euid), so the groups
 * and gids can be set, the uids last. way_back keeps a saved uid to
 * return with (0 when it was root, else the euid it had): from then is
 * the thread's state before, NULL when unknown.
 */
static int creds_apply(const struct nw_creds *to, const struct nw_creds *from,
		       bool way_back)
{
	bool root = !syscall(SYS_setresuid, -1, 0, -1);
	uid_t saved = to->uid[2];

	if (way_back)
		saved = root ? 0 : from->uid[1];
	if ((!from || from->ngroups != to->ngroups ||
	     memcmp(from->groups, to->groups,
		    (size_t)to->ngroups * sizeof(gid_t))) &&
	    syscall(SYS_setgroups, to->ngroups, to->groups))
		return -1;
	if (syscall(SYS_setresgid, to->gid[0], to->gid[1], to->gid[2]) ||
	    syscall(SYS_setresuid, to->uid[0], to->uid[1], saved))
		return -1;
	return 0;
}

/* Back to saved, from the thread's state as it is now. */
static void creds_back(const struct nw_creds *saved)
{
	struct nw_creds *now = creds_current();
	int ret = creds_apply(saved, now, false);

	nw_creds_put(now);
	if (ret)
		nw_bug(__FILE__, __LINE__, "personality: no way back");
}

struct nw_creds *nw_creds_enter(const struct nw_creds *c, int *err)
{
	struct nw_creds *saved = creds_current();

	*err = 0;
	if (!saved) {
		*err = -ENOMEM;
		return NULL;
	}
	if (creds_equal(saved, c))
		return saved;
	if (creds_apply(c, saved, true)) {
		creds_back(saved);
		nw_creds_put(saved);
		*err = -EINVAL;
		return NULL;
	}
	return saved;
}

void nw_creds_leave(struct nw_creds *saved)
{
	if (!saved)
		return;
	creds_back(saved);
	nw_creds_put(saved);
}

void nw_creds_free_all(struct nw_ring *ring)
{
	struct nw_creds_table *t =
		__atomic_load_n(&ring->pers, __ATOMIC_ACQUIRE);

	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	for (unsigned int i = 0; i < t->nr; i++) {
		nw_creds_put(t->slot[i]);
		t->slot[i] = NULL;
	}
	pthread_mutex_unlock(&t->lock);
}

void nw_creds_destroy(struct nw_ring *ring)
{
	struct nw_creds_table *t =
		__atomic_load_n(&ring->pers, __ATOMIC_ACQUIRE);

	if (!t)
		return;
	nw_creds_free_all(ring);
	/*
	 * The ring points at the table until it is freed: else only this
	 * thread does meanwhile, and LeakSanitizer, whose check can skip a
	 * thread, reports it leaked (reg-fuzz, issue 14). Nothing looks the
	 * table up now: the ring is released, under reg_lock.
	 */
	free(t->slot);
	t->slot = NULL;
	t->nr = 0;
	pthread_mutex_destroy(&t->lock);
	__atomic_store_n(&ring->pers, NULL, __ATOMIC_RELEASE);
	free(t);
}
