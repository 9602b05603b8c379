/* A worker process: its own database connection, a libev loop, up to
 * `slots` running jobs. Started by the supervisor as `kyud --worker N`. */
#ifndef KYU_WORKER_H
#define KYU_WORKER_H

/* Runs until told to stop (or the supervisor goes away); returns the exit
 * status for the process. */
int worker_main(int index, const char *config_path);

#endif
