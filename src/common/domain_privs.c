/* What this process may do (domain_privs.h). */
#include "domain_privs.h"

#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>

#include <sys/capability.h>

static bool has_cap(cap_t caps, cap_value_t c)
{
	cap_flag_value_t v = CAP_CLEAR;
	return caps && cap_get_flag(caps, c, CAP_EFFECTIVE, &v) == 0 && v == CAP_SET;
}

void domain_privs_get(struct domain_privs *p)
{
	cap_t caps = cap_get_proc();

	p->uid = geteuid();
	p->gid = getegid();
	errno = 0;
	p->nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		p->nice = 0;
	p->setuid = has_cap(caps, CAP_SETUID);
	p->setgid = has_cap(caps, CAP_SETGID);
	p->sys_resource = has_cap(caps, CAP_SYS_RESOURCE);
	p->sys_nice = has_cap(caps, CAP_SYS_NICE);
	if (caps)
		cap_free(caps);
}

void domain_privs_seal(void)
{
	cap_t caps;

	(void)cap_reset_ambient();
	caps = cap_get_proc();
	if (!caps)
		return;
	if (cap_clear_flag(caps, CAP_INHERITABLE) == 0)
		(void)cap_set_proc(caps);
	cap_free(caps);
}
