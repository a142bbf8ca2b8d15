# scripts/lib.sh — shell helpers shared by the scripts that start local
# services (kafka.sh, registry.sh, quickstart.sh). It is sourced, not run;
# the sourcing script defines die and note (its own message prefix).

# port_open PORT: something accepts connections on 127.0.0.1:PORT. Plain
# bash, so that no network tool has to be installed.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port prints a port on 127.0.0.1 that nothing listens on: the
# kernel's choice when python3 is there, else a random free one.
free_port() {
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
    return
  fi
  local p
  for _ in $(seq 1 200); do
    p=$((20000 + RANDOM % 40000))
    port_open "$p" || { echo "$p"; return; }
  done
  die "could not find a free port on 127.0.0.1"
}

# terminate PID SECONDS WHAT: SIGTERM, up to SECONDS for a clean exit,
# then SIGKILL; returns once the process is gone.
terminate() {
  local pid=$1 grace=$2 what=$3
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + grace))
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    note "$what did not stop within ${grace}s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
}
