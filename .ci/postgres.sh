#!/usr/bin/env bash
# Start a local PostgreSQL for the storage tests and print how to reach it.
#
#   eval "$(bash .ci/postgres.sh)"        # exports UMMAYA_TEST_DATABASE_URL
#   bash .ci/postgres.sh stop             # stop it and remove its folder
#
# Installs the server with apt when no initdb is found. The cluster lives in $UMMAYA_PG_DIR
# (default /tmp/ummaya-pg), listens on 127.0.0.1:$UMMAYA_PG_PORT (default 54329) and keeps its unix
# socket in that folder. PostgreSQL refuses to run as root, so under root it runs as the
# `postgres` system user (created when missing). Running it again reuses a cluster that is up.
# Only `export …` lines go to stdout; everything else goes to stderr.
set -euo pipefail

PGDIR="${UMMAYA_PG_DIR:-/tmp/ummaya-pg}"
PORT="${UMMAYA_PG_PORT:-54329}"
DB="${UMMAYA_PG_DB:-ummaya_test}"
log() { echo "postgres.sh: $*" >&2; }

find_bin() {
  local name="$1" d
  for d in /usr/local/bin $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV); do
    if [ -x "$d/$name" ]; then echo "$d/$name"; return 0; fi
  done
  command -v "$name" 2>/dev/null || return 1
}

if ! INITDB="$(find_bin initdb)"; then
  log "no PostgreSQL server found; installing with apt"
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update >&2
  $SUDO apt-get install -y postgresql >&2
  INITDB="$(find_bin initdb)"
fi
BIN="$(dirname "$INITDB")"
PG_CTL="$BIN/pg_ctl"
PSQL="$(find_bin psql || true)"
[ -x "$BIN/psql" ] && PSQL="$BIN/psql"

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
  log "creating system user postgres"
  useradd --system --no-create-home postgres
fi

if [ "${1:-start}" = "stop" ]; then
  if [ -d "$PGDIR/data" ]; then as_pg "$PG_CTL" -D "$PGDIR/data" -m fast -w stop >&2 || true; fi
  rm -rf "$PGDIR"
  log "stopped and removed $PGDIR"
  exit 0
fi

mkdir -p "$PGDIR"
[ "$(id -u)" -eq 0 ] && chown postgres: "$PGDIR"

if [ ! -f "$PGDIR/data/PG_VERSION" ]; then
  log "initdb into $PGDIR/data"
  as_pg "$INITDB" -D "$PGDIR/data" -A trust -U postgres -E UTF8 --locale=C --no-sync >&2
fi

if as_pg "$PG_CTL" -D "$PGDIR/data" status >/dev/null 2>&1; then
  log "already running"
else
  log "starting on 127.0.0.1:$PORT"
  as_pg "$PG_CTL" -D "$PGDIR/data" -l "$PGDIR/server.log" -w -t 60 \
    -o "-p $PORT -k $PGDIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c max_connections=200" \
    start >&2 || { cat "$PGDIR/server.log" >&2; exit 1; }
fi

exists="$("$PSQL" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -tAc \
  "SELECT 1 FROM pg_database WHERE datname = '$DB'")"
if [ "$exists" != "1" ]; then
  log "creating database $DB"
  "$PSQL" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qc "CREATE DATABASE $DB" >&2
fi

echo "export UMMAYA_TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:$PORT/$DB"
