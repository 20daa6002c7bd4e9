/* SPDX-License-Identifier: MIT */
/* Register opcodes of regwq.c: workers, NAPI, QUERY. */
#ifndef NW_REGWQ_H
#define NW_REGWQ_H

struct nw_ring;

/* The calling thread's first ring sets its worker limits' defaults. */
void nw_regwq_task_init(const struct nw_ring *ring);

int nw_reg_iowq_aff(struct nw_ring *ring, void *arg, unsigned int nr_args);
int nw_reg_unregister_iowq_aff(struct nw_ring *ring, void *arg,
			       unsigned int nr_args);
int nw_reg_iowq_max_workers(struct nw_ring *ring, void *arg,
			    unsigned int nr_args);
int nw_reg_napi(struct nw_ring *ring, void *arg, unsigned int nr_args);
int nw_reg_unregister_napi(struct nw_ring *ring, void *arg,
			   unsigned int nr_args);
/* ring may be NULL: io_uring_register(-1, IORING_REGISTER_QUERY, ...). */
int nw_reg_query(struct nw_ring *ring, void *arg, unsigned int nr_args);

#endif
