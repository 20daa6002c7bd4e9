/* SPDX-License-Identifier: MIT */
/* Intrusive doubly linked list (the kernel's list_head, in our words). */
#ifndef NW_LIST_H
#define NW_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct nw_list {
	struct nw_list *next, *prev;
};

static inline void nw_list_init(struct nw_list *h)
{
	h->next = h->prev = h;
}

static inline bool nw_list_empty(const struct nw_list *h)
{
	return h->next == h;
}

static inline void nw_list_add_tail(struct nw_list *n, struct nw_list *h)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void nw_list_del(struct nw_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

#define nw_list_entry(ptr, type, member) \
	((type *)((char *)(ptr)-offsetof(type, member)))

#define nw_list_for_each_safe(pos, tmp, head)                    \
	for (pos = (head)->next, tmp = pos->next; pos != (head); \
	     pos = tmp, tmp = pos->next)

#endif
