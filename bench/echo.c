/* SPDX-License-Identifier: MIT */
/*
 * Workload "echo": a TCP echo server over loopback (127.0.0.1).
 *
 * The server is one ring of the engine being measured, on the main thread:
 * it ACCEPTs `conns` connections, then on each one RECV -> SEND the bytes
 * back -> RECV again, forever (a short SEND sends the rest first).
 *
 * The client is the same for every engine, so that only the server's
 * engine differs between two rows: a second thread with plain nonblocking
 * sockets and a level-triggered epoll set (no io_uring at all). It keeps
 * one `size`-byte message in flight per connection: it sends one, waits
 * until all of it came back (and checks it), records the round trip and
 * sends the next. A client on a ring of the measured engine would count
 * that engine twice per request and blur what the server costs.
 *
 * A warm-up (a fifth of the measuring time, at most 0.5 s) is not counted;
 * then requests that complete within `seconds` are counted and their round
 * trips sampled. requests/s and the p50/p99 round trip are reported per
 * engine, and the server thread's CPU time per request (srv_cpu_us: what
 * the engine costs, also when the client is what limits requests/s); the
 * kernel's io_uring runs first. The connections are made before the server
 * starts (the listen backlog holds them), so a set-up failure of the ring
 * never leaves the client waiting.
 *
 * Engine "epoll" is the floor: no ring, the server people write instead of
 * io_uring. An edge-triggered epoll set; on readiness accept4() until
 * EAGAIN, or recv() until EAGAIN with a send() of what came after each
 * recv (a short send waits for EPOLLOUT before reading on).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static long echo_conns = 16;
static long echo_size = 64;

static const struct bench_param echo_params[] = {
	{"conns", 'c', "connections, one message in flight on each",
	 &echo_conns},
	{"size", 's', "message size in bytes", &echo_size},
	{NULL, 0, NULL, NULL},
};

#define ECHO_MAX_CONNS	 4096 /* net.core.somaxconn's default */
#define ECHO_MAX_SIZE	 (1L << 20)
#define ECHO_MAX_WARMUP	 0.5
#define ECHO_STALL_MS	 5000 /* the client gives up after this silence */
#define ECHO_EVENTS	 64
#define ECHO_OP_ACCEPT	 1
#define ECHO_OP_RECV	 2
#define ECHO_OP_SEND	 3
#define ECHO_UD(i, op)	 (((uint64_t)(i) << 8) | (op))
#define ECHO_UD_OP(ud)	 ((unsigned int)((ud)&0xff))
#define ECHO_UD_CONN(ud) ((unsigned int)((ud) >> 8))

/* The server's side of one connection. */
struct echo_sconn {
	int fd;
	unsigned int len;  /* bytes received, to send back */
	unsigned int sent; /* of those, sent */
	unsigned char *buf;
};

/* The client's side of one connection. */
struct echo_cconn {
	int fd;
	unsigned int sent, got;
	bool want_out; /* EPOLLOUT asked for (a send was short) */
	bool active;
	uint64_t seq;
	uint64_t t0; /* ns, when the message's first byte was sent */
	unsigned char *sbuf, *rbuf;
};

struct echo_run {
	const struct bench_ctx *ctx;
	const struct t_calls *eng;
	unsigned int conns, size;
	int lfd;

	/* server (main thread) */
	struct bench_ring ring;
	struct echo_sconn *sc;
	int srv_ep; /* the epoll server's set */
	unsigned int accepted, open, unsubmitted;
	double cpu0, cpu1; /* server thread CPU s at warm_end, deadline */
	const char *err_op;
	int err;
	bool skipped;

	/* client (its own thread) */
	pthread_t thr;
	struct echo_cconn *cc;
	int epfd;
	unsigned int active;
	double warm_end, deadline; /* bench_now() */
	uint64_t done;		   /* requests completed in the window */
	double *rtt;		   /* ns, requests sent in the window */
	size_t nr_rtt, cap_rtt;
	const char *cerr_op;
	int cerr;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int echo_fail(struct echo_run *er, const char *op, int err)
{
	if (!er->err) {
		er->err_op = op;
		er->err = err;
	}
	return err;
}

static int client_fail(struct echo_run *er, const char *op, int err)
{
	if (!er->cerr) {
		er->cerr_op = op;
		er->cerr = err;
	}
	return err;
}

/* ---- the client: plain sockets and epoll, on its own thread ---- */

static int client_watch(struct echo_run *er, unsigned int i, bool out)
{
	struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0),
				 .data.u32 = i};

	if (epoll_ctl(er->epfd, EPOLL_CTL_MOD, er->cc[i].fd, &ev))
		return client_fail(er, "epoll_ctl", -errno);
	er->cc[i].want_out = out;
	return 0;
}

/* Send what is left of the message; ask for EPOLLOUT while some is. */
static int client_send(struct echo_run *er, unsigned int i)
{
	struct echo_cconn *c = &er->cc[i];
	ssize_t n;

	while (c->sent < er->size) {
		n = send(c->fd, c->sbuf + c->sent, er->size - c->sent,
			 MSG_NOSIGNAL);
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0)
			return client_fail(er, "send", -errno);
		c->sent += (unsigned int)n;
	}
	if ((c->sent < er->size) != c->want_out)
		return client_watch(er, i, c->sent < er->size);
	return 0;
}

static int client_start_msg(struct echo_run *er, unsigned int i)
{
	struct echo_cconn *c = &er->cc[i];

	c->seq++;
	memcpy(c->sbuf, &c->seq, er->size < 8 ? er->size : 8);
	c->sent = c->got = 0;
	c->t0 = now_ns();
	return client_send(er, i);
}

static int client_sample(struct echo_run *er, double ns)
{
	double *v;

	if (er->nr_rtt == er->cap_rtt) {
		er->cap_rtt = er->cap_rtt ? 2 * er->cap_rtt : 65536;
		v = realloc(er->rtt, er->cap_rtt * sizeof(*v));
		if (!v)
			return client_fail(er, "realloc", -ENOMEM);
		er->rtt = v;
	}
	er->rtt[er->nr_rtt++] = ns;
	return 0;
}

/* A whole message came back: count it, then send the next one. */
static int client_msg_done(struct echo_run *er, unsigned int i)
{
	struct echo_cconn *c = &er->cc[i];
	uint64_t t = now_ns();
	double now = t * 1e-9;

	if (memcmp(c->sbuf, c->rbuf, er->size))
		return client_fail(er, "echoed message", -EPROTO);
	if (now >= er->warm_end && now <= er->deadline) {
		er->done++;
		if (c->t0 * 1e-9 >= er->warm_end &&
		    client_sample(er, (double)(t - c->t0)))
			return er->cerr;
	}
	if (now < er->deadline)
		return client_start_msg(er, i);
	c->active = false;
	er->active--;
	return 0;
}

/*
 * One recv per readiness event: the epoll set is level-triggered, so what
 * is left is reported again, and no call is spent on finding the socket
 * empty (which would cost the client as much as a request).
 */
static int client_recv(struct echo_run *er, unsigned int i)
{
	struct echo_cconn *c = &er->cc[i];
	ssize_t n;

	if (c->got >= c->sent)
		return 0;
	n = recv(c->fd, c->rbuf + c->got, c->sent - c->got, 0);
	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n < 0)
		return client_fail(er, "recv", -errno);
	if (n == 0)
		return client_fail(er, "server closed a connection",
				   -ECONNRESET);
	c->got += (unsigned int)n;
	if (c->got == er->size)
		return client_msg_done(er, i);
	return 0;
}

static int client_event(struct echo_run *er, const struct epoll_event *ev)
{
	unsigned int i = ev->data.u32;

	if (!er->cc[i].active)
		return 0;
	if ((ev->events & EPOLLOUT) && client_send(er, i))
		return er->cerr;
	if (ev->events & (EPOLLIN | EPOLLERR | EPOLLHUP))
		return client_recv(er, i);
	return 0;
}

static int client_loop(struct echo_run *er)
{
	struct epoll_event ev[ECHO_EVENTS];
	unsigned int i;
	int n, k;

	for (i = 0; i < er->conns; i++) {
		er->cc[i].active = true;
		er->active++;
		if (client_start_msg(er, i))
			return er->cerr;
	}
	while (er->active) {
		n = epoll_wait(er->epfd, ev, ECHO_EVENTS, ECHO_STALL_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return client_fail(er, "epoll_wait", -errno);
		if (n == 0)
			return client_fail(er, "echo (no reply for 5 s)",
					   -ETIMEDOUT);
		for (k = 0; k < n; k++)
			if (client_event(er, &ev[k]))
				return er->cerr;
	}
	return 0;
}

/*
 * The client thread. Whatever happens, it closes its sockets at the end:
 * the server's RECVs then complete with 0 and the server loop ends.
 */
static void *client_main(void *arg)
{
	struct echo_run *er = arg;
	unsigned int i;

	client_loop(er);
	for (i = 0; i < er->conns; i++) {
		close(er->cc[i].fd);
		er->cc[i].fd = -1;
	}
	return NULL;
}

/* ---- the server: one ring of the measured engine ---- */

static struct io_uring_sqe *server_sqe(struct echo_run *er, int op, int fd,
				       void *buf, unsigned int len, uint64_t ud)
{
	struct io_uring_sqe *sqe = bench_get_sqe(&er->ring);

	if (!sqe) {
		echo_fail(er, "SQ ring full", -EOVERFLOW);
		return NULL;
	}
	bench_prep_rw(sqe, op, fd, buf, len, 0, ud);
	return sqe;
}

static int server_recv(struct echo_run *er, unsigned int i)
{
	struct echo_sconn *s = &er->sc[i];

	if (!server_sqe(er, IORING_OP_RECV, s->fd, s->buf, er->size,
			ECHO_UD(i, ECHO_OP_RECV)))
		return er->err;
	return 0;
}

static int server_send(struct echo_run *er, unsigned int i)
{
	struct echo_sconn *s = &er->sc[i];
	struct io_uring_sqe *sqe;

	sqe = server_sqe(er, IORING_OP_SEND, s->fd, s->buf + s->sent,
			 s->len - s->sent, ECHO_UD(i, ECHO_OP_SEND));
	if (!sqe)
		return er->err;
	sqe->msg_flags = MSG_NOSIGNAL;
	return 0;
}

static int server_accepted(struct echo_run *er, int res)
{
	unsigned int i = er->accepted;

	if (res < 0)
		return echo_fail(er, "ACCEPT completion", res);
	if (i >= er->conns) {
		close(res);
		return echo_fail(er, "ACCEPT (one too many)", -EPROTO);
	}
	er->sc[i].fd = res;
	er->accepted++;
	er->open++;
	return server_recv(er, i);
}

static int server_cqe(struct echo_run *er, const struct io_uring_cqe *cqe)
{
	unsigned int i = ECHO_UD_CONN(cqe->user_data);
	struct echo_sconn *s;

	if (ECHO_UD_OP(cqe->user_data) == ECHO_OP_ACCEPT)
		return server_accepted(er, cqe->res);
	if (i >= er->accepted)
		return echo_fail(er, "CQE user_data", -EPROTO);
	s = &er->sc[i];
	if (cqe->res < 0)
		return echo_fail(er,
				 ECHO_UD_OP(cqe->user_data) == ECHO_OP_RECV
					 ? "RECV completion"
					 : "SEND completion",
				 cqe->res);
	if (ECHO_UD_OP(cqe->user_data) == ECHO_OP_RECV) {
		if (cqe->res == 0) { /* the client is done */
			close(s->fd);
			s->fd = -1;
			er->open--;
			return 0;
		}
		s->len = (unsigned int)cqe->res;
		s->sent = 0;
		return server_send(er, i);
	}
	s->sent += (unsigned int)cqe->res;
	if (s->sent < s->len)
		return server_send(er, i);
	return server_recv(er, i);
}

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The server thread's CPU time over the client's counting window. */
static void server_cpu_sample(struct echo_run *er)
{
	double t = bench_now();

	if (!er->cpu0 && t >= er->warm_end)
		er->cpu0 = thread_cpu();
	else if (er->cpu0 && !er->cpu1 && t >= er->deadline)
		er->cpu1 = thread_cpu();
}

/* Submit what is queued and wait for one CQE, then handle all there are. */
static int server_round(struct echo_run *er)
{
	struct bench_ring *r = &er->ring;
	unsigned int head, n, k, to_submit;
	int ret;

	server_cpu_sample(er);
	to_submit = er->unsubmitted + bench_flush_sq(r);
	ret = bench_enter(r, to_submit, 1, 0);
	if (ret == -EINTR)
		ret = 0;
	if (ret < 0)
		return echo_fail(er, "io_uring_enter", ret);
	er->unsubmitted = to_submit - (unsigned int)ret;
	n = bench_cq_ready(r, &head);
	for (k = 0; k < n; k++)
		if (server_cqe(er, bench_cqe_at(r, head + k)))
			break;
	bench_cq_advance(r, n);
	return er->err;
}

static int server_loop(struct echo_run *er)
{
	unsigned int i;

	for (i = 0; i < er->conns; i++)
		if (!server_sqe(er, IORING_OP_ACCEPT, er->lfd, NULL, 0,
				ECHO_UD(0, ECHO_OP_ACCEPT)))
			return er->err;
	while (er->accepted < er->conns || er->open)
		if (server_round(er))
			return er->err;
	return 0;
}

/* ---- the floor: an edge-triggered epoll server, no ring ---- */

static int fcntl_nonblock(int fd);

#define ECHO_LISTENER UINT32_MAX

static int epsrv_watch(struct echo_run *er, int op, int fd, uint32_t id,
		       bool out)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET |
					   (out ? EPOLLOUT : 0),
				 .data.u32 = id};

	if (epoll_ctl(er->srv_ep, op, fd, &ev))
		return echo_fail(er, "epoll_ctl (server)", -errno);
	return 0;
}

static int epsrv_accept(struct echo_run *er)
{
	int fd;

	for (;;) {
		fd = accept4(er->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && errno == EAGAIN)
			return 0;
		if (fd < 0)
			return echo_fail(er, "accept4", -errno);
		if (er->accepted >= er->conns) {
			close(fd);
			return echo_fail(er, "accept4 (one too many)", -EPROTO);
		}
		er->sc[er->accepted].fd = fd;
		if (epsrv_watch(er, EPOLL_CTL_ADD, fd, er->accepted, false))
			return er->err;
		er->accepted++;
		er->open++;
	}
}

/* Send the rest of what was received; 1 when some is left (EAGAIN). */
static int epsrv_send(struct echo_run *er, unsigned int i)
{
	struct echo_sconn *s = &er->sc[i];
	ssize_t n;

	while (s->sent < s->len) {
		n = send(s->fd, s->buf + s->sent, s->len - s->sent,
			 MSG_NOSIGNAL);
		if (n < 0 && errno == EAGAIN)
			return 1;
		if (n < 0)
			return echo_fail(er, "send (server)", -errno);
		s->sent += (unsigned int)n;
	}
	return 0;
}

/* Readiness of connection i: flush, then recv and echo until EAGAIN. */
static int epsrv_conn(struct echo_run *er, unsigned int i, uint32_t events)
{
	struct echo_sconn *s = &er->sc[i];
	bool was_out = s->sent < s->len;
	ssize_t n;
	int ret;

	for (;;) {
		ret = epsrv_send(er, i);
		if (ret < 0)
			return ret;
		if (ret || (!was_out && s->sent < s->len))
			return was_out ? 0
				       : epsrv_watch(er, EPOLL_CTL_MOD, s->fd,
						     i, true);
		if (was_out && !(events & EPOLLIN))
			return epsrv_watch(er, EPOLL_CTL_MOD, s->fd, i, false);
		n = recv(s->fd, s->buf, er->size, 0);
		if (n < 0 && errno == EAGAIN)
			return was_out ? epsrv_watch(er, EPOLL_CTL_MOD, s->fd,
						     i, false)
				       : 0;
		if (n < 0)
			return echo_fail(er, "recv (server)", -errno);
		if (n == 0) { /* the client is done */
			close(s->fd);
			s->fd = -1;
			er->open--;
			return 0;
		}
		s->len = (unsigned int)n;
		s->sent = 0;
	}
}

static int epsrv_loop(struct echo_run *er)
{
	struct epoll_event ev[ECHO_EVENTS];
	int n, k;

	if (fcntl_nonblock(er->lfd))
		return echo_fail(er, "fcntl", -errno);
	er->srv_ep = epoll_create1(EPOLL_CLOEXEC);
	if (er->srv_ep < 0)
		return echo_fail(er, "epoll_create1", -errno);
	if (epsrv_watch(er, EPOLL_CTL_ADD, er->lfd, ECHO_LISTENER, false))
		return er->err;
	while (er->accepted < er->conns || er->open) {
		server_cpu_sample(er);
		n = epoll_wait(er->srv_ep, ev, ECHO_EVENTS, ECHO_STALL_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return echo_fail(er, "epoll_wait (server)",
					 n ? -errno : -ETIMEDOUT);
		for (k = 0; k < n; k++)
			if (ev[k].data.u32 == ECHO_LISTENER
				    ? epsrv_accept(er)
				    : er->sc[ev[k].data.u32].fd >= 0 &&
					      epsrv_conn(er, ev[k].data.u32,
							 ev[k].events))
				return er->err;
	}
	return 0;
}

/* ---- set-up and tear-down ---- */

static int fcntl_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int tcp_nodelay(int fd)
{
	int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int echo_listen(struct echo_run *er, struct sockaddr_in *sa)
{
	socklen_t len = sizeof(*sa);
	int one = 1;

	er->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (er->lfd < 0)
		return echo_fail(er, "socket", -errno);
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (setsockopt(er->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    tcp_nodelay(er->lfd))
		return echo_fail(er, "setsockopt", -errno);
	if (bind(er->lfd, (struct sockaddr *)sa, sizeof(*sa)))
		return echo_fail(er, "bind 127.0.0.1", -errno);
	if (listen(er->lfd, (int)er->conns))
		return echo_fail(er, "listen", -errno);
	if (getsockname(er->lfd, (struct sockaddr *)sa, &len))
		return echo_fail(er, "getsockname", -errno);
	return 0;
}

/* Connect every client socket (the backlog holds them) and watch it. */
static int echo_connect(struct echo_run *er, const struct sockaddr_in *sa)
{
	struct epoll_event ev = {.events = EPOLLIN};
	unsigned int i;
	int fd;

	er->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (er->epfd < 0)
		return echo_fail(er, "epoll_create1", -errno);
	for (i = 0; i < er->conns; i++) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return echo_fail(er, "socket", -errno);
		er->cc[i].fd = fd;
		if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)))
			return echo_fail(er, "connect", -errno);
		if (tcp_nodelay(fd))
			return echo_fail(er, "setsockopt", -errno);
		ev.data.u32 = i;
		if (epoll_ctl(er->epfd, EPOLL_CTL_ADD, fd, &ev))
			return echo_fail(er, "epoll_ctl", -errno);
	}
	/* nonblocking only now: a blocking connect is the simple one */
	for (i = 0; i < er->conns; i++)
		if (fcntl_nonblock(er->cc[i].fd))
			return echo_fail(er, "fcntl", -errno);
	return 0;
}

static int echo_alloc(struct echo_run *er)
{
	unsigned int i;

	er->sc = calloc(er->conns, sizeof(*er->sc));
	er->cc = calloc(er->conns, sizeof(*er->cc));
	if (!er->sc || !er->cc)
		return echo_fail(er, "calloc", -ENOMEM);
	for (i = 0; i < er->conns; i++) {
		er->sc[i].fd = er->cc[i].fd = -1;
		er->sc[i].buf = malloc(er->size);
		er->cc[i].sbuf = malloc(er->size);
		er->cc[i].rbuf = malloc(er->size);
		if (!er->sc[i].buf || !er->cc[i].sbuf || !er->cc[i].rbuf)
			return echo_fail(er, "malloc", -ENOMEM);
		/* a pattern per connection, so crossed wires show */
		memset(er->cc[i].sbuf, 'a' + i % 26, er->size);
	}
	return 0;
}

static void echo_free(struct echo_run *er)
{
	unsigned int i;

	for (i = 0; er->sc && er->cc && i < er->conns; i++) {
		if (er->sc[i].fd >= 0)
			close(er->sc[i].fd);
		if (er->cc[i].fd >= 0)
			close(er->cc[i].fd);
		free(er->sc[i].buf);
		free(er->cc[i].sbuf);
		free(er->cc[i].rbuf);
	}
	free(er->sc);
	free(er->cc);
	if (er->epfd >= 0)
		close(er->epfd);
	if (er->lfd >= 0)
		close(er->lfd);
	if (er->srv_ep >= 0)
		close(er->srv_ep);
	bench_ring_close(&er->ring);
}

/*
 * Run the server to its end. On a server failure the connections are
 * shut down (and those not accepted yet reset, by shutting the listening
 * socket down), so that the client sees EOF and its thread ends too.
 */
static int echo_serve(struct echo_run *er)
{
	double warm = er->ctx->seconds / 5;
	unsigned int i;
	int ret;

	if (warm > ECHO_MAX_WARMUP)
		warm = ECHO_MAX_WARMUP;
	er->warm_end = bench_now() + warm;
	er->deadline = er->warm_end + er->ctx->seconds;
	ret = pthread_create(&er->thr, NULL, client_main, er);
	if (ret)
		return echo_fail(er, "pthread_create", -ret);
	if (er->eng ? server_loop(er) : epsrv_loop(er)) {
		shutdown(er->lfd, SHUT_RDWR);
		for (i = 0; i < er->accepted; i++)
			if (er->sc[i].fd >= 0)
				shutdown(er->sc[i].fd, SHUT_RDWR);
	}
	pthread_join(er->thr, NULL);
	if (!er->err && er->cerr)
		echo_fail(er, er->cerr_op, er->cerr);
	return er->err;
}

static int echo_one(struct echo_run *er)
{
	const struct bench_ctx *ctx = er->ctx;
	struct sockaddr_in sa;
	int ret;

	if (echo_alloc(er) || echo_listen(er, &sa) || echo_connect(er, &sa))
		return er->err;
	if (!er->eng)
		return echo_serve(er);
	ret = bench_ring_open(&er->ring, er->eng, er->conns,
			      ctx->plain_setup ? 0 : 2 * er->conns,
			      ctx->plain_setup ? 0 : BENCH_FAST_FLAGS);
	if (ret) {
		er->skipped = bench_setup_error_is_skip(er->eng, ret);
		return echo_fail(er, er->ring.err_op, ret);
	}
	if (!bench_ring_has_op(&er->ring, IORING_OP_ACCEPT) ||
	    !bench_ring_has_op(&er->ring, IORING_OP_RECV) ||
	    !bench_ring_has_op(&er->ring, IORING_OP_SEND)) {
		er->skipped = true;
		return echo_fail(er, "skipped: ACCEPT/RECV/SEND not supported",
				 -EOPNOTSUPP);
	}
	return echo_serve(er);
}

struct echo_result {
	bool ok;
	double req_per_sec;
};

/* Server CPU time per request, in us (NAN when not sampled). */
static double echo_server_us(const struct echo_run *er)
{
	if (!er->cpu0 || !er->cpu1 || !er->done)
		return NAN;
	return (er->cpu1 - er->cpu0) / er->done * 1e6;
}

/* The engine's name: the ring's, or the epoll server's. */
static const char *echo_name(const struct t_calls *eng)
{
	return eng ? eng->name : "epoll";
}

static void echo_report(const struct echo_run *er, const struct bench_stats *st,
			double rps)
{
	const char *setup = er->eng ? bench_setup_name(er->ring.flags) : "-";
	double cpu_us = echo_server_us(er);

	if (er->ctx->json) {
		bench_json_begin("echo", echo_name(er->eng));
		bench_json_num("conns", er->conns);
		bench_json_num("req_per_sec", rps);
		bench_json_num("p50_us", st->p50 / 1e3);
		bench_json_num("p99_us", st->p99 / 1e3);
		bench_json_num("size", er->size);
		bench_json_num("requests", (double)er->done);
		bench_json_num("server_cpu_us", cpu_us);
		bench_json_str("setup", setup);
		bench_json_end();
		return;
	}
	printf("  %-8s %10.0f %9.1f %9.1f %11.2f   setup %s\n",
	       echo_name(er->eng), rps, st->p50 / 1e3, st->p99 / 1e3, cpu_us,
	       setup);
	fflush(stdout);
}

/* One engine measured and reported; 1 on a failure. */
static int echo_cell(const struct bench_ctx *ctx, const struct t_calls *eng,
		     struct echo_result *res)
{
	struct bench_stats st;
	struct echo_run er;
	char what[64];
	int ret;

	memset(&er, 0, sizeof(er));
	er.ctx = ctx;
	er.eng = eng;
	er.conns = (unsigned int)echo_conns;
	er.size = (unsigned int)echo_size;
	er.lfd = er.epfd = er.srv_ep = er.ring.fd = -1;
	snprintf(what, sizeof(what), "echo %s", echo_name(eng));
	bench_watchdog((unsigned int)ctx->seconds + (ctx->smoke ? 20 : 120),
		       what);
	ret = echo_one(&er);
	bench_watchdog(0, NULL);
	if (ret) {
		bench_report_error(ctx, "echo", echo_name(eng), er.err_op,
				   er.err);
	} else {
		bench_stats(er.rtt, er.nr_rtt, &st);
		res->ok = true;
		res->req_per_sec = er.done / ctx->seconds;
		echo_report(&er, &st, res->req_per_sec);
	}
	free(er.rtt);
	echo_free(&er);
	return ret && !er.skipped;
}

static int echo_run(const struct bench_ctx *ctx)
{
	struct echo_result kernel = {0}, user = {0}, epoll = {0};
	int status = 0;

	if (echo_conns > ECHO_MAX_CONNS || echo_size > ECHO_MAX_SIZE) {
		fprintf(stderr,
			"nowait-bench echo: at most %d connections and "
			"%ld-byte messages\n",
			ECHO_MAX_CONNS, ECHO_MAX_SIZE);
		return 1;
	}
	if (!ctx->json)
		printf("echo: TCP over 127.0.0.1, %ld connections, %ld-byte "
		       "messages, one in flight each; %.1f s per engine\n"
		       "  %-8s %10s %9s %9s %11s\n",
		       echo_conns, echo_size, ctx->seconds, "engine", "req/s",
		       "p50_us", "p99_us", "srv_cpu_us");
	if (bench_ctx_has_flavour(ctx, &t_calls_kernel, "kernel"))
		status |= echo_cell(ctx, &t_calls_kernel, &kernel);
	if (bench_ctx_has_flavour(ctx, &t_calls_user, "user"))
		status |= echo_cell(ctx, &t_calls_user, &user);
	if (bench_ctx_has_floor(ctx, "epoll"))
		status |= echo_cell(ctx, NULL, &epoll);
	bench_report_ratio_to(ctx, "echo", NULL, "user/kernel",
			      user.req_per_sec, kernel.req_per_sec);
	bench_report_ratio_to(ctx, "echo", NULL, "user/epoll", user.req_per_sec,
			      epoll.req_per_sec);
	return status;
}

const struct bench_workload bench_echo = {
	.name = "echo",
	.desc = "TCP echo server over loopback, one message in flight per "
		"connection (req/s, round trip us)",
	.run = echo_run,
	.params = echo_params,
};
