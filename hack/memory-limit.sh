#!/usr/bin/env bash
# Runs the real daemon in a memory cgroup limited like the chart's
# container (LIMIT, 128M by default) through a storm: a kandev database of
# SESSIONS sessions, 90 % of them active (18,500 by default: about 16,700
# active sessions and 9,900 findings, opened and announced in the first
# cycle), for RUN_SECONDS. The cgroup's directory is mounted over
# /sys/fs/cgroup/memory as a container runtime does, so watchdogd finds the
# limit where it looks in a pod and sets Go's memory limit to 80 % of it.
# It runs twice: as shipped, which must not be OOM-killed, and with
# GOMEMLIMIT=off, to show what the limit is for (this one may be killed).
#
# Needs root and a writable cgroup v1 memory hierarchy
# (/sys/fs/cgroup/memory): a manual check, not part of make test.
#   sudo bash hack/memory-limit.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local
SESSIONS="${SESSIONS:-18500}"
LIMIT="${LIMIT:-128M}"
RUN_SECONDS="${RUN_SECONDS:-70}"
root=/sys/fs/cgroup/memory
[ -w "$root" ] || { echo "needs root and a cgroup v1 memory hierarchy at $root" >&2; exit 2; }

make -s build
work="$(mktemp -d)"
trap 'rmdir "$root"/watchdogd-memcheck-* 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
go run ./hack/kandevdb -out "$work/kandev.db" -sessions "$SESSIONS" -active 0.9
cat >"$work/config.yaml" <<EOF
database:
  url: sqlite://$work/kandev.db
state:
  url: sqlite://$work/state/ledger.db
schedule: "@every 10s"
http:
  listen: 127.0.0.1:0
log:
  level: info
  format: json
EOF

# run NAME [ENV…]: one daemon in a fresh cgroup; prints what the kernel
# and the log say, and fails if the daemon was OOM-killed or did not exit 0
# on the SIGTERM that ends the run.
run() {
  local name="$1" cg="$root/watchdogd-memcheck-$1"
  shift
  rm -rf "$work/state" && mkdir -p "$work/state"
  mkdir "$cg"
  echo "$LIMIT" >"$cg/memory.limit_in_bytes"
  local log="$work/$name.log" rc=0
  # (…) 2>/dev/null: the subshell, not this script, reports a kill.
  (unshare -m --propagation private sh -c 'mount --bind "$0" /sys/fs/cgroup/memory && echo $$ >/sys/fs/cgroup/memory/cgroup.procs && exec env "$@"' \
    "$cg" "$@" timeout --preserve-status -s TERM "$RUN_SECONDS" "$PWD/bin/watchdogd" run --config "$work/config.yaml" >"$log" 2>&1; exit $?) 2>/dev/null || rc=$?
  local kills cycles
  kills="$(awk '$1 == "oom_kill" {print $2}' "$cg/memory.oom_control")"
  cycles="$(grep -c '"msg":"cycle finished"' "$log" || true)"
  printf '%-9s limit=%s go_memory_limit=%s exit=%s oom_kills=%s cycles_finished=%s first_cycle=[%s]\n' "$name" "$LIMIT" \
    "$(grep -o '"go_memory_limit":"[^"]*"' "$log" | head -1 | cut -d'"' -f4)" "$rc" "$kills" "$cycles" \
    "$(grep -m1 -o '"findings":[0-9]*,"opened":[0-9]*' "$log" || true)"
  rmdir "$cg"
  [ "${kills:-0}" -eq 0 ] && [ "$rc" -eq 0 ] # SIGTERM at the end: exit 0
}

run shipped || shipped=fail
run off GOMEMLIMIT=off || true
if [ -n "${shipped:-}" ]; then
  echo "FAIL: with its own memory limit the daemon was OOM-killed or did not exit 0" >&2
  exit 1
fi
echo "PASS: the storm ran within $LIMIT"
