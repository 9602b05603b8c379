/* Logging: one line per event on stderr, tagged with the process role.
 * journald (or the test harness) adds timestamps. Used by the daemons:
 * kyud (supervisor and workers), kyud-metrics and kyu web; kyu, a
 * command, writes to its terminal instead. */
#ifndef KYU_LOG_H
#define KYU_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include "attr.h"

enum log_level { LOG_LVL_DEBUG, LOG_LVL_INFO, LOG_LVL_NOTICE, LOG_LVL_WARNING, LOG_LVL_ERROR };

/* Lines read "PROGRAM[ROLE]: ..." ("PROGRAM: ..." for an empty role).
 * program defaults to "kyud"; role is e.g. "sup" or "worker 3". Both
 * copied. */
void log_set_program(const char *program);
void log_set_role(const char *role);
void log_set_level(enum log_level level);
KYU_MUSTCHECK int log_level_parse(const char *s, enum log_level *ret);
/* The name log_level_parse accepts for level ("?" if out of range). */
const char *log_level_name(enum log_level level);

/* Decide whether lines carry the journal's "<N>" priority prefix: only
 * when stderr is the stream systemd named in JOURNAL_STREAM. Once per
 * process, first thing (a worker is a process of its own, exec'd: it asks
 * again). Until it is called, lines are plain. */
void log_detect_journal(void);
/* JOURNAL_STREAM's "DEVICE:INODE" (decimal, as systemd writes it and
 * stat -c %d:%i prints it) names the file with that device and inode.
 * False for NULL, an empty or malformed value. */
bool log_journal_matches(const char *value, unsigned long long dev, unsigned long long ino);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A library's logger callback (libmicrohttpd's EXTERNAL_LOGGER): one
 * warning line "PREFIX: message", where cls is the PREFIX string. */
void log_library_line(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_LVL_NOTICE, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARNING, __VA_ARGS__)
#define log_err(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)

#endif
