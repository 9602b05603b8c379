#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* posix_spawn rather than fork: glibc implements it with CLONE_VFORK, so its
 * cost does not grow with the worker's memory (see tests/bench and the
 * README), and it reports exec failures back to us as an errno. */
/* Why a failed spawn failed: the working directory, or the program. */
static bool cwd_failed(const char *cwd, char *err, size_t errlen)
{
	struct stat st;

	if (!cwd || !*cwd)
		return false;
	if (stat(cwd, &st) < 0) {
		snprintf(err, errlen, "cannot change to directory %s: %s", cwd, strerror(errno));
		return true;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "cannot change to directory %s: not a directory", cwd);
		return true;
	}
	if (access(cwd, X_OK) < 0) {
		snprintf(err, errlen, "cannot change to directory %s: %s", cwd, strerror(errno));
		return true;
	}
	return false;
}

int proc_spawn(const struct jobspec *spec, const char *cwd, pid_t *ret_pid, int *ret_out, int *exec_errno,
	      char *err, size_t errlen)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int pipefd[2] = { -1, -1 };
	pid_t pid;
	int r;

	*exec_errno = 0;
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot create output pipe: %s", strerror(errno));
		return r;
	}
	/* Only our end is non-blocking: the job sees an ordinary pipe. */
	if (fcntl(pipefd[0], F_SETFL, O_NONBLOCK) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot set output pipe non-blocking: %s", strerror(errno));
		goto fail_pipe;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDERR_FILENO);
	/* Everything of ours is O_CLOEXEC already; this also covers descriptors
	 * opened by libraries that forget to. */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	if (cwd && *cwd)
		posix_spawn_file_actions_addchdir_np(&fa, cwd);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
						POSIX_SPAWN_SETSIGDEF);

	r = (spec->use_path ? posix_spawnp : posix_spawn)(&pid, spec->argv[0], &fa, &attr,
							 spec->argv, spec->envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(pipefd[1]);
	if (r != 0) {
		const char *what = r == ENOENT ? "not found" : r == EACCES ? "permission denied" : strerror(r);
		if (!cwd_failed(cwd, err, errlen)) {
			*exec_errno = r;
			snprintf(err, errlen, "cannot execute %s: %s", spec->argv[0], what);
		}
		close(pipefd[0]);
		return -r;
	}
	*ret_pid = pid;
	*ret_out = pipefd[0];
	return 0;

fail_pipe:
	close(pipefd[0]);
	close(pipefd[1]);
	return r;
}

void proc_kill_group(pid_t pgid, int sig)
{
	if (pgid > 1)
		(void)kill(-pgid, sig);
}
