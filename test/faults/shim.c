/* SPDX-License-Identifier: MIT */
/*
 * The fault-injection shim (make faults, tools/faults.sh): the engine's
 * objects are linked into one (ld -r --wrap) whose malloc, calloc,
 * realloc and pthread_create calls come here; the test program's own
 * calls do not. NOWAIT_FAULT="N:SEED" fails one call in N (malloc,
 * calloc, realloc with NULL and ENOMEM; pthread_create with EAGAIN), the
 * k-th call failing when a hash of (SEED, k) says so: the same run fails
 * the same calls. Unset or N = 0: nothing fails. At exit the shim prints
 * how many calls it failed (NOWAIT_FAULT_REPORT set).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t nmemb, size_t size);
void *__wrap_realloc(void *p, size_t n);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg);

static uint64_t every, seed;
static uint64_t calls, failed;
static int ready; /* 0 unread, 1 read */

static void read_setting(void)
{
	const char *s = getenv("NOWAIT_FAULT");
	unsigned long long n = 0, sd = 0;

	if (s && sscanf(s, "%llu:%llu", &n, &sd) >= 1) {
		every = n;
		seed = sd;
	}
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/* Does this call fail? */
static int fail_now(void)
{
	uint64_t k;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		read_setting();
	if (!every)
		return 0;
	k = __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
	if (mix(seed * 0x9e3779b97f4a7c15ULL + k) % every)
		return 0;
	__atomic_fetch_add(&failed, 1, __ATOMIC_RELAXED);
	return 1;
}

void *__wrap_malloc(size_t n)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return malloc(n);
}

void *__wrap_calloc(size_t nmemb, size_t size)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return calloc(nmemb, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	if (n && fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, n);
}

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg)
{
	if (fail_now())
		return EAGAIN;
	return pthread_create(t, attr, fn, arg);
}

__attribute__((destructor)) static void report(void)
{
	if (getenv("NOWAIT_FAULT_REPORT"))
		fprintf(stderr, "faults: %llu of %llu engine calls failed\n",
			(unsigned long long)failed, (unsigned long long)calls);
}
