#!/usr/bin/env bash
# The kernel tier's press-stamp figures (issue 29 item 2, docs/BENCHMARKS.md "Press times from
# the kernel's edge"): boots the kernel tier's VM (tests/kernel/run: Debian's kernel, gpio-sim,
# the daemon on lgpio) and runs tests/kernel/test_press_stamps.py with TIMERD_KERNEL_PRESSES
# presses (default 400), which prints the stamp's error against the instant the test wrote the
# line's `pull` (p50, p99, max) and the callback's delay it spares. Under QEMU's emulator (no
# KVM) the figures are an emulator's, an upper bound for a Pi; run it on a quiet machine.
#
#   bench/kernel_stamps.sh [--install] [PYTEST ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
install=()
if [ "${1:-}" = --install ]; then install=(--install); shift; fi
TIMERD_KERNEL_PRESSES=${TIMERD_KERNEL_PRESSES:-400} \
    exec tests/kernel/run "${install[@]}" -q -k test_press_stamps "$@"
