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

# need_java MAJOR WHO: Java MAJOR or newer is installed, or die naming WHO,
# what needs it.
need_java() {
  command -v java >/dev/null 2>&1 || die "Java is not installed: $2 needs Java $1 or newer (Debian: apt-get install -y openjdk-17-jre-headless)"
  local v major
  v=$(java -version 2>&1 | awk -F'"' '/version/ {print $2; exit}')
  major=${v%%.*}
  [[ $major == 1 ]] && { major=${v#1.}; major=${major%%.*}; } # 1.8.0_x is Java 8
  [[ $major =~ ^[0-9]+$ ]] && ((major >= $1)) || die "Java $v is too old: $2 needs Java $1 or newer"
}

# need_maven WHY: Maven is installed, or die saying WHY it is needed.
need_maven() {
  command -v mvn >/dev/null 2>&1 || die "Maven is not installed: $1 (Debian: apt-get install -y maven)"
}
