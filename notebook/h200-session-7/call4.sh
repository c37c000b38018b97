#!/bin/bash
# Device call 4 of session 7 (issues 18 and 20): call1.sh again, unchanged,
# on the tree after the telemetry fix (one cgroup read per GPU process) and
# the stalled-drain thread snapshot: entry all mix x3, harmless x3.
exec bash "$(dirname "$0")/call1.sh"
