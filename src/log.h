/* Logging: one line per event on stderr, tagged with the process role.
 * journald (or the test harness) adds timestamps. */
#ifndef KYU_LOG_H
#define KYU_LOG_H

enum log_level { LOG_LVL_DEBUG, LOG_LVL_INFO, LOG_LVL_NOTICE, LOG_LVL_WARNING, LOG_LVL_ERROR };

/* role is e.g. "sup" or "worker 3"; copied. */
void log_set_role(const char *role);
void log_set_level(enum log_level level);
int log_level_parse(const char *s, enum log_level *ret);
/* The name log_level_parse accepts for level ("?" if out of range). */
const char *log_level_name(enum log_level level);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_LVL_NOTICE, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARNING, __VA_ARGS__)
#define log_err(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)

#endif
