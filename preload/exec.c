/* SPDX-License-Identifier: MIT */
/*
 * libnowait-preload.so, the exec interposers: before the image goes, a
 * forked child's requests in flight on its parent's ring are cancelled
 * and their CQEs posted (nowait_hook_exec), as the kernel's exec cancels
 * the task's io_uring requests (io_uring_task_cancel), so the parent that
 * reaps them loses none (docs/fork.md; liburing's timeout test, whose
 * child submits a TIMEOUT and a linked NOP and then execs). Everything
 * else goes straight through: the real call, its result and errno. The
 * list forms (execl, execlp, execle) are passed on as their vector forms,
 * which is what glibc does with them too.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>
#include <nowait-hook.h>

#define NW_EXPORT __attribute__((visibility("default")))

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[],
			   int);

extern char **environ;

static void *next_sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

NW_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	execve_fn real = (execve_fn)next_sym("execve");

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	nowait_hook_exec();
	return real(path, argv, envp);
}

NW_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	execvpe_fn real = (execvpe_fn)next_sym("execvpe");

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	nowait_hook_exec();
	return real(file, argv, envp);
}

NW_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

NW_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

NW_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	fexecve_fn real = (fexecve_fn)next_sym("fexecve");

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	nowait_hook_exec();
	return real(fd, argv, envp);
}

NW_EXPORT int execveat(int dirfd, const char *path, char *const argv[],
		       char *const envp[], int flags)
{
	execveat_fn real = (execveat_fn)next_sym("execveat");

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	nowait_hook_exec();
	return real(dirfd, path, argv, envp, flags);
}

/* The arguments after arg0 up to the NULL, counted with arg0. */
static size_t list_len(va_list ap)
{
	size_t n = 1;

	while (va_arg(ap, char *))
		n++;
	return n;
}

/* argv from arg0 and the list up to its NULL (included); ap is left past it. */
static void list_fill(char **argv, const char *arg0, va_list *ap)
{
	size_t i = 1;

	argv[0] = (char *)arg0;
	while ((argv[i] = va_arg(*ap, char *)))
		i++;
}

NW_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, arg);
	n = list_len(ap);
	va_end(ap);
	{
		char *argv[n + 1];

		va_start(ap, arg);
		list_fill(argv, arg, &ap);
		va_end(ap);
		return execve(path, argv, environ);
	}
}

NW_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, arg);
	n = list_len(ap);
	va_end(ap);
	{
		char *argv[n + 1];

		va_start(ap, arg);
		list_fill(argv, arg, &ap);
		va_end(ap);
		return execvpe(file, argv, environ);
	}
}

/* execle: the environment follows the list's NULL. */
NW_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, arg);
	n = list_len(ap);
	va_end(ap);
	{
		char *argv[n + 1], **envp;

		va_start(ap, arg);
		list_fill(argv, arg, &ap);
		envp = va_arg(ap, char **);
		va_end(ap);
		return execve(path, argv, envp);
	}
}
