#!/usr/bin/env bash
# ctest fixture helper: starts/stops the shardproxy the integration tests use.
#   proxy_ctl.sh start BINARY CONFIG PORT RUNDIR
#   proxy_ctl.sh stop RUNDIR
# The proxy logs (level debug) to RUNDIR/shardproxy.log; its pid is in RUNDIR/shardproxy.pid.
set -euo pipefail

START_TIMEOUT_S=30
STOP_TIMEOUT_S=15

log() { echo "proxy_ctl: $*" >&2; }
alive() { [[ -n "$1" ]] && kill -0 "$1" 2>/dev/null; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

stop() {
  local run_dir="$1" pid deadline
  pid="$(cat "$run_dir/shardproxy.pid" 2>/dev/null || true)"
  if [[ -z "$pid" ]]; then
    log "not running"
    return 0
  fi
  if ! alive "$pid"; then
    # It was started by us and is gone: it died during the tests.
    log "shardproxy (pid $pid) exited before it was asked to stop; log tail:"
    tail -n 40 "$run_dir/shardproxy.log" >&2 || true
    rm -f "$run_dir/shardproxy.pid"
    return 1
  fi
  log "stopping pid $pid"
  kill -TERM "$pid" 2>/dev/null || true
  deadline=$(( SECONDS + STOP_TIMEOUT_S ))
  while alive "$pid" && (( SECONDS < deadline )); do sleep 0.2; done
  rm -f "$run_dir/shardproxy.pid"
  if alive "$pid"; then
    kill -KILL "$pid" 2>/dev/null || true
    log "did not exit within ${STOP_TIMEOUT_S}s after SIGTERM; killed"
    tail -n 30 "$run_dir/shardproxy.log" >&2 || true
    return 1
  fi
  log "stopped"
}

start() {
  local bin="$1" config="$2" port="$3" run_dir="$4" pid deadline
  mkdir -p "$run_dir"
  stop "$run_dir" || true  # a proxy left over from an interrupted run
  [[ -x "$bin" ]] || { log "$bin does not exist (build the shardproxy target)"; return 1; }
  if port_open "$port"; then
    log "port $port is already in use by another process"
    return 1
  fi
  "$bin" --config "$config" --check || { log "$config failed --check"; return 1; }
  echo "==== $(date -u +%FT%TZ) start ====" >>"$run_dir/shardproxy.log"
  setsid "$bin" --config "$config" --log-level debug </dev/null >>"$run_dir/shardproxy.log" 2>&1 &
  pid=$!
  echo "$pid" >"$run_dir/shardproxy.pid"
  deadline=$(( SECONDS + START_TIMEOUT_S ))
  until port_open "$port"; do
    if ! alive "$pid"; then
      log "shardproxy exited during start-up; log tail:"
      tail -n 40 "$run_dir/shardproxy.log" >&2 || true
      rm -f "$run_dir/shardproxy.pid"
      return 1
    fi
    if (( SECONDS >= deadline )); then
      log "shardproxy not listening on $port after ${START_TIMEOUT_S}s; log tail:"
      tail -n 40 "$run_dir/shardproxy.log" >&2 || true
      stop "$run_dir" || true
      return 1
    fi
    sleep 0.2
  done
  log "shardproxy pid $pid listening on 127.0.0.1:$port (log: $run_dir/shardproxy.log)"
}

case "${1:-}" in
  start) shift; [[ $# -eq 4 ]] || { log "usage: start BINARY CONFIG PORT RUNDIR"; exit 2; }; start "$@" ;;
  stop) shift; [[ $# -eq 1 ]] || { log "usage: stop RUNDIR"; exit 2; }; stop "$@" ;;
  *) log "usage: proxy_ctl.sh start|stop ..."; exit 2 ;;
esac
