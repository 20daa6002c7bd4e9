/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz harnesses share (fuzzenv.c): a fresh environment per input
 * (pipes, sockets, a file, an eventfd, a scratch directory, at the same fd
 * numbers every time, so the kernel and nowait see the same numbers), an
 * arena of program memory the SQEs point into, and the sanitising of an
 * SQE taken from the input so that it can only touch that environment:
 * fds from the set (real and bad ones), addresses in the arena, NULL or
 * unmapped, paths from a fixed list inside the scratch directory, iovecs
 * and msghdrs rebuilt to point into the arena, sockets AF_UNIX only,
 * connects to the loopback listener only. Every opcode and SQE flag stays
 * reachable.
 */
#ifndef NW_FUZZENV_H
#define NW_FUZZENV_H

#include <stddef.h>
#include <stdint.h>
#include <linux/io_uring.h>
#include "rawring.h"

#define FZ_ARENA     65536
#define FZ_FIXED_BUF 0x8300 /* sqe-fuzz's registered buffer: 4 KiB */
#define FZ_NFD	     16
#define FZ_FD_BASE   200		   /* the environment's fds: 200..215 */
#define FZ_MARK_MSG  0xa000000000000000ULL /* MSG_RING CQEs' user_data */
#define FZ_MARK_TAG  0xb000000000000000ULL /* resource tags */
#define FZ_MARK_OWN  0xc000000000000000ULL /* the harness's own SQEs */

struct fz_env {
	int fd[FZ_NFD]; /* by slot; -1 / bad numbers included */
	int ring_fd;	/* the ring, for SQEs that name it (slot 7) */
	int ring_fd2;	/* a second ring (MSG_RING's target), or -1 */
	uint8_t *arena; /* FZ_ARENA bytes, then a PROT_NONE page */
	int child;	/* a child process for WAITID, or 0 */
	int child_pidfd;
	int pers_id; /* a registered personality, or 0 */
};

/* Once per process: scratch directory (the cwd), arena. */
void fz_init(void);
/* A fresh environment; the arena filled from data (then a pattern). */
void fz_env_open(struct fz_env *e, const uint8_t *data, size_t size);
/* A child that exits after up to 7 ms (at most one; its pid). */
int fz_env_child(struct fz_env *e, unsigned int ms);
/* Close it all, the fds the SQEs made too; empty the scratch dir. */
void fz_env_close(struct fz_env *e);
/*
 * Set by sqe-fuzz: every opcode (to 62), most SQEs tidied (the fields the
 * opcode does not read cleared, its flags to the known bits: prep passes
 * and issue is reached), personalities, fds in EPOLL_CTL's off. Off (the
 * differential harness, whose corpus and allowlist were made so): opcodes
 * to 48 and raw fields, as before.
 */
extern int fz_wide;
/* Make a raw SQE from the input safe for this environment (in place). */
void fz_sanitize(struct fz_env *e, struct io_uring_sqe *sqe);
/* The ring setups the harnesses try, by index (input byte). */
unsigned int fz_setup_flags(unsigned int i, unsigned int *entries,
			    unsigned int *cq_entries);
#define FZ_NSETUPS 8

/*
 * Each consumed SQE (user_data 1..n) must end in exactly one final CQE: a
 * result without IORING_CQE_F_MORE, or for SEND_ZC and SENDMSG_ZC the
 * notification (IORING_CQE_F_NOTIF) after a result with F_MORE. A zerocopy
 * send canceled as a link posts its result without F_MORE and still a
 * notification: that one is no second final. A second final CQE or
 * notification aborts (a finding).
 */
#define FZ_MAX_SQES 64 /* user_data 1..this */
struct fz_finals {
	uint8_t finals[FZ_MAX_SQES + 1];
	uint8_t notifs[FZ_MAX_SQES + 1];
	uint8_t more[FZ_MAX_SQES + 1]; /* CQEs with F_MORE seen */
	uint8_t op[FZ_MAX_SQES + 1];   /* each SQE's opcode and flags */
	uint8_t sflags[FZ_MAX_SQES + 1];
	unsigned int nfinal;
};
void fz_final_count(struct fz_finals *f, uint64_t ud,
		    const struct io_uring_cqe *c);
/* What SQE ud was, as queued (for the report below). */
void fz_final_note(struct fz_finals *f, const struct io_uring_sqe *sqe);

/*
 * The teardown's wait for the final CQEs has no wall-clock cut of its
 * own that a loaded machine can pass: it ends when every consumed SQE has
 * its final CQE. Only a wait past FZ_REAP_LIMIT_S (15 s; below
 * libFuzzer's -timeout of 20 s, so that a hang says what it waited on) is
 * a finding: fz_final_missing prints each SQE without its final CQE
 * (opcode, flags, whether a CQE with F_MORE came) and the ring's counters,
 * and aborts. FZ_HANG_DUMP=FILE adds every thread's stack (gdb) to FILE
 * first; FZ_REAP_NOTE=1 prints the same list, without aborting, for a
 * wait past 1 s or 5000 rounds (the old cut), and how long it took.
 */
#define FZ_REAP_LIMIT_S 15
uint64_t fz_now_us(void);

/* What the teardown's wait calls back, on the harness's run (u). */
struct fz_reaper {
	void (*reap)(void *u);		   /* count the CQEs there are */
	unsigned int (*consumed)(void *u); /* the input's SQEs consumed */
	void (*again)(void *u);		   /* cancel everything once more */
	unsigned int again_every;	   /* rounds between those */
	void (*wait)(void *u);		   /* enter(GETEVENTS), 1 ms at most */
};
/*
 * Reap until every consumed SQE of ring r has its final CQE and nothing
 * is left unsubmitted, or for FZ_REAP_LIMIT_S; the microseconds waited.
 */
uint64_t fz_reap_finals(const struct fz_finals *f, struct t_ring *r,
			const struct fz_reaper *o, void *u);

/* An enter; one that waits (GETEVENTS) waits at most us microseconds. */
int fz_enter(int fd, unsigned int to_submit, unsigned int min_complete,
	     unsigned int flags, unsigned int us);
/* An SQE of the input (p, 64 bytes) into sqe, sanitised, user_data ud. */
void fz_sqe_from_input(struct fz_env *e, struct fz_finals *f,
		       struct io_uring_sqe *sqe, const uint8_t *p, uint64_t ud);
void fz_final_missing(const struct fz_finals *f, const struct t_ring *r,
		      unsigned int consumed, unsigned int queued,
		      uint64_t waited_us);

#endif
