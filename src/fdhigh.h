/* SPDX-License-Identifier: MIT */
/*
 * The engine's own fds live out of the program's way (fdhigh.c): at or
 * above half the RLIMIT_NOFILE soft limit, so the numbers the program gets
 * from open/socket/accept are the ones it would get on the kernel.
 */
#ifndef NW_FDHIGH_H
#define NW_FDHIGH_H

/*
 * Move a just-made engine fd up: returns the new fd (the old one closed),
 * or fd itself when it is negative, already high, or cannot be moved.
 * errno is untouched when fd < 0, so `x = nw_fd_hide(f()); if (x < 0)
 * return -errno;` works.
 */
int nw_fd_hide(int fd);

/* The engine's own copy of fd (FD_CLOEXEC), high if it can be: -errno. */
int nw_fd_dup_high(int fd);

#endif
