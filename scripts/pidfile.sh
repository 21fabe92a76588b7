# Sourced by the scripts that run a server from a Go-built binary
# (ferretdb.sh, tidb.sh): its pid lives in $DIR/pid.

pid() { cat "$DIR/pid" 2>/dev/null || true; }

running() {
  local p
  p="$(pid)"
  [ -n "$p" ] && kill -0 "$p" 2>/dev/null
}

# stop_server asks the server to stop, waits up to 15 s, then kills it.
stop_server() {
  local p
  p="$(pid)"
  if [ -n "$p" ]; then
    kill "$p" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  fi
  rm -f "$DIR/pid"
}
