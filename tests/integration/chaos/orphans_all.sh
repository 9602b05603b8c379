#!/usr/bin/env bash
# Issue 44, item 1: kyud's own processes SIGKILLed must never leave a job
# running beside its next attempt. Here every kyud process at once (kill -9
# of every kyud pid): none is left to stop anything, so the kernel ends the
# jobs' process groups (the life line, kyud(8), "When kyud dies"). Before
# it, the four long jobs ran on and their second attempts started beside
# them when the leases ran out.
# The scenario and the verdict: tests/chaos/orphans.sh.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/chaos/chaos.sh"
. "$KYU_SRC/tests/chaos/orphans.sh"

orphans_run all
