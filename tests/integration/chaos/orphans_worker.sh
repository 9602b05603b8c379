#!/usr/bin/env bash
# Issue 44, item 1: kyud's own processes SIGKILLed must never leave a job
# running beside its next attempt. Here one worker alone: the kernel ends
# its jobs' process groups at its death (the life line, kyud(8), "When kyud
# dies"), and the supervisor sweeps what is left and restarts it.
# The scenario and the verdict: tests/chaos/orphans.sh.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/chaos/chaos.sh"
. "$KYU_SRC/tests/chaos/orphans.sh"

orphans_run worker
