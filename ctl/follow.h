/* SPDX-License-Identifier: MIT */
/*
 * Following a job to its end by polling GET /jobs/ID, with a live progress
 * display.
 */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "ctl/client.h"

/* Seconds a poll asks argusd to hold the answer until the job changes (?wait=). */
#define FOLLOW_WAIT_S 10
/* The least time between two polls, in milliseconds, whatever argusd does with ?wait=. */
#define FOLLOW_MIN_INTERVAL_MS 500

/* Whether a job in state has ended: anything but queued and running. */
bool job_state_ended(const char *state);

/*
 * Poll job id until its state has ended. Progress goes to out (NULL:
 * none): on a terminal one line rewritten in place, showing the level, the
 * node and the seconds elapsed; otherwise one line per change. Returns 0
 * and *ret, the final answer (its raw body kept), or -errno with *ret_err
 * (owned) saying what failed.
 */
int follow_job(struct client *c, long long id, FILE *out, struct client_reply *ret, char **ret_err);
