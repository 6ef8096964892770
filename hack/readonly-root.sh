#!/usr/bin/env bash
# Runs the real watchdogd the way the chart runs it — a read-only root
# filesystem (readOnlyRootFilesystem: true), uid 65532, no environment —
# with only kandev's data directory and the ledger's directory writable,
# over a kandev database holding a storm of findings (SESSIONS sessions,
# 2000 by default: about 250 findings). It checks that the daemon opens its
# ledger, announces every finding, serves /metrics, and stops cleanly on
# SIGTERM; that scan and the operator commands work there too; and that no
# line of the log is an error. SQLite keeps temporary tables in memory
# (temp_store=2), so nothing needs /tmp.
#
# Needs root (unshare -m, setpriv): a manual check, not part of make test.
#   sudo bash hack/readonly-root.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local
SESSIONS="${SESSIONS:-2000}"
PORT="${PORT:-19464}"

make -s build
work="$(mktemp -d)"
chmod 755 "$work" # uid 65532 reads the config in it
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
mkdir -p "$work/kandev" "$work/state"
go run ./hack/kandevdb -out "$work/kandev/kandev.db" -sessions "$SESSIONS"
cat >"$work/config.yaml" <<EOF
database:
  url: sqlite://$work/kandev/kandev.db
state:
  url: sqlite://$work/state/ledger.db
schedule: "@every 2s"
http:
  listen: 127.0.0.1:$PORT
log:
  level: info
  format: json
EOF
chown -R 65532:65532 "$work/kandev" "$work/state"

# Inside a private mount namespace: every mount read-only (/proc, /sys and
# /dev aside), then kandev's and the ledger's directories writable again.
inside() {
  set -euo pipefail
  awk '{print $5}' /proc/self/mountinfo | sort -u | while read -r m; do
    case "$m" in /proc* | /sys* | /dev | /dev/pts* | /dev/mqueue*) continue ;; esac
    mount -o remount,bind,ro "$m" 2>/dev/null || { mount --bind "$m" "$m" && mount -o remount,bind,ro "$m"; }
  done
  for d in "$WORK/kandev" "$WORK/state"; do
    mount --bind "$d" "$d"
    mount -o remount,bind,rw "$d"
  done
  if touch /tmp/.readonly-probe 2>/dev/null || touch "$WORK/.probe" 2>/dev/null; then
    echo "FAIL: the root filesystem is still writable" >&2
    return 1
  fi
  # setpriv and env exec: the daemon keeps the pid that SIGTERM is sent to.
  as65532() { exec setpriv --reuid 65532 --regid 65532 --clear-groups env -i PATH=/usr/bin:/bin "$@"; }
  (as65532 "$BIN" scan --config "$WORK/config.yaml" --output json) >"$WORK/state/scan.json"
  (as65532 "$BIN" run --config "$WORK/config.yaml") >"$WORK/state/run.log" 2>&1 &
  pid=$!
  trap 'kill -TERM "$pid" 2>/dev/null || true' EXIT
  sleep 8
  curl -fsS "http://127.0.0.1:$PORT/metrics" >"$WORK/state/metrics.txt"
  (as65532 "$BIN" episodes list --open --limit 0 --config "$WORK/config.yaml") >"$WORK/state/episodes.txt"
  kill -TERM "$pid"
  wait "$pid"
}
export -f inside
export WORK="$work" BIN="$PWD/bin/watchdogd" PORT
unshare -m --propagation private bash ${TRACE:+-x} -c inside

findings="$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["findings"]))' "$work/state/scan.json")"
delivered="$(awk '/^watchdogd_actions_total\{action="log",result="delivered"\}/ {print $2}' "$work/state/metrics.txt")"
listed="$(($(grep -c . "$work/state/episodes.txt" || true) - 1))" # less the header
errors="$(grep -c '"level":"error"' "$work/state/run.log" || true)"
echo "findings=$findings open-episodes=$listed log-actions-delivered=${delivered:-0} error-lines=$errors"
# The scan ran seconds before the daemon: a session crossing a threshold in
# between can change the count, so the daemon is held to its own ledger.
if [ "$findings" -eq 0 ] || [ "$listed" -eq 0 ] || [ "${delivered:-0}" != "$listed" ] || [ "$errors" -ne 0 ]; then
  echo "FAIL: see $work/state (kept)" >&2
  trap - EXIT
  exit 1
fi
echo "PASS: watchdogd on a read-only root filesystem as uid 65532"
