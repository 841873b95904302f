#!/usr/bin/env bash
# postgres-test.sh starts a throwaway PostgreSQL for the bookstore tests and
# prints its DSN. It is idempotent: run it again and it reuses what exists.
#
#   export KNEE_TEST_POSTGRES="$(scripts/postgres-test.sh)"
#   go test ./bookstore/...
#
# Everything but the DSN goes to stderr so the line above works.
set -euo pipefail

PGDATA_DIR="${KNEE_PG_DIR:-/tmp/knee-pg}"
PGHOST_ADDR=127.0.0.1
PGPORT_NUM="${KNEE_PG_PORT:-55432}"
DB_NAME=knee
DB_USER=knee
DB_PASS=knee

log() { echo "postgres-test: $*" >&2; }

# find_bin locates a PostgreSQL server binary: PATH first, then Debian's
# versioned directory (the newest one), which is not on PATH by default.
find_bin() {
	if command -v "$1" >/dev/null 2>&1; then
		command -v "$1"
		return
	fi
	local dir
	dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
	if [[ -n "$dir" && -x "$dir/$1" ]]; then
		echo "$dir/$1"
	fi
}

if [[ -z "$(find_bin initdb)" ]]; then
	log "initdb not found; installing Debian's postgresql"
	if [[ "$(id -u)" -ne 0 ]]; then
		log "need root to install postgresql (apt-get)"
		exit 1
	fi
	apt-get update >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql >&2
fi

INITDB="$(find_bin initdb)"
PG_CTL="$(find_bin pg_ctl)"
PSQL="$(find_bin psql)"

# as_postgres runs a command as the postgres user: the server refuses root.
as_postgres() {
	if [[ "$(id -un)" == postgres ]]; then
		"$@"
	elif [[ "$(id -u)" -eq 0 ]]; then
		runuser -u postgres -- "$@"
	else
		log "run as root or as the postgres user"
		exit 1
	fi
}

if [[ ! -s "$PGDATA_DIR/PG_VERSION" ]]; then
	log "creating cluster in $PGDATA_DIR"
	mkdir -p "$PGDATA_DIR"
	chown postgres: "$PGDATA_DIR" 2>/dev/null || true
	chmod 700 "$PGDATA_DIR"
	# C collation keeps ORDER BY byte-wise, the same as SQLite's BINARY.
	as_postgres "$INITDB" -D "$PGDATA_DIR" -U postgres --auth=trust \
		--locale=C --encoding=UTF8 >&2
fi

if ! as_postgres "$PG_CTL" -D "$PGDATA_DIR" status >/dev/null 2>&1; then
	log "starting server on $PGHOST_ADDR:$PGPORT_NUM"
	# max_connections above the bookstore's default pool of 100 plus the
	# connections the tests hold themselves; the socket stays in the data dir
	# so no system directory is needed.
	# The port can be held for a minute by a loopback connection in
	# TIME-WAIT that happened to get it as its ephemeral port (load tests
	# open thousands): try again rather than fail the whole test run.
	for attempt in 1 2 3 4 5 6; do
		if as_postgres "$PG_CTL" -D "$PGDATA_DIR" -l "$PGDATA_DIR/server.log" -w -t 60 \
			-o "-h $PGHOST_ADDR -p $PGPORT_NUM -k $PGDATA_DIR -c max_connections=250 -c fsync=off" \
			start >&2; then
			break
		fi
		if [[ $attempt -eq 6 ]] || ! tail -n 5 "$PGDATA_DIR/server.log" | grep -q "Address already in use"; then
			log "the server did not start; see $PGDATA_DIR/server.log"
			exit 1
		fi
		log "port $PGPORT_NUM is busy (attempt $attempt of 6); retrying in 15 s"
		sleep 15
	done
fi

psql_admin() {
	as_postgres "$PSQL" -h "$PGHOST_ADDR" -p "$PGPORT_NUM" -U postgres -d postgres \
		-v ON_ERROR_STOP=1 -qtAX "$@"
}

if [[ "$(psql_admin -c "SELECT 1 FROM pg_roles WHERE rolname = '$DB_USER'")" != 1 ]]; then
	log "creating role $DB_USER"
	psql_admin -c "CREATE ROLE $DB_USER LOGIN PASSWORD '$DB_PASS'" >&2
fi
if [[ "$(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'")" != 1 ]]; then
	log "creating database $DB_NAME"
	psql_admin -c "CREATE DATABASE $DB_NAME OWNER $DB_USER TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'" >&2
fi

echo "postgres://$DB_USER:$DB_PASS@$PGHOST_ADDR:$PGPORT_NUM/$DB_NAME?sslmode=disable"
