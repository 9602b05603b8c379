/* The status channel of a running attempt (kyu_jobs(7), "The status
 * channel"): the job writes lines to descriptor KYU_STATUS_FD (jobspec.h),
 * "progress P [NOTE]" and "result JSON", and kyud keeps the last of each
 * for the row's progress, progress_note and result columns. This module
 * reads the bytes into lines and keeps what they say. Pure: no I/O (job.c
 * reads the pipe, live.c and results.c write what is kept), so it is
 * unit-tested without a process.
 *
 * What it costs is bounded whatever the job writes: one line is buffered,
 * at most line_max bytes of it (a longer line is skipped to its end and
 * counted), and the last result, at most result_max bytes; nothing is
 * allocated until the job writes something. */
#ifndef KYU_STATUS_H
#define KYU_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/util.h"

/* The longest note a progress line may carry: kyu_jobs.progress_note. */
#define STATUS_NOTE_MAX 255
/* Room kept for the first malformed line's description. */
#define STATUS_WHY_MAX 160

struct status_chan {
	size_t result_max;  /* bytes of JSON a result line may carry */
	struct strbuf line; /* the line being read (no '\n') */
	bool skipping;      /* it is over the bound: dropped up to its end */
	int progress;       /* 0..100; -1: none written */
	char note[STATUS_NOTE_MAX + 1];
	size_t note_len;
	bool has_note;
	struct strbuf result; /* the last result's JSON, as written */
	bool has_result;
	uint64_t gen;             /* counts changes of progress and note (live.c compares) */
	uint64_t bad;             /* malformed lines ignored */
	char why[STATUS_WHY_MAX]; /* what was wrong with the first of them */
};

void status_init(struct status_chan *s, size_t result_max);
/* The longest line kept: a result line's prefix and result_max bytes, or a
 * progress line with the longest note, whichever is longer. */
size_t status_line_max(const struct status_chan *s);
/* Bytes read from the descriptor: every line they end is applied. */
void status_add(struct status_chan *s, const char *data, size_t n);
/* The descriptor closed (or the attempt ended): a last line without its
 * '\n' counts as one. */
void status_end(struct status_chan *s);
/* Whether anything arrived that the row must show (a result, a progress or
 * malformed lines): a job that never used the channel has its result
 * recorded exactly as before. */
bool status_used(const struct status_chan *s);
/* "kyu: N malformed line(s) on KYU_STATUS_FD ignored; the first: WHY"
 * into buf (valid UTF-8), or "" when none was. */
void status_bad_message(const struct status_chan *s, char *buf, size_t size);
void status_free(struct status_chan *s);

#endif
