#!/usr/bin/env bash
# Installs what knee's tests need on a fresh Debian machine (Go modules, a
# PostgreSQL server, Chromium for the HTML report and dashboard tests, tmux
# for the progress line's terminal test, Prometheus for the remote-write
# test, Java with HdrHistogram's Java jar for the percentile reference test,
# iproute2 for the Kubernetes rehearsal in network namespaces), starts
# PostgreSQL on loopback and runs every test.
# `make test` and .ci/run call this script.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v initdb >/dev/null 2>&1 || [ -x /usr/lib/postgresql/*/bin/initdb ] 2>/dev/null || need_apt+=(postgresql)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux) # the progress line in a real terminal
command -v prometheus >/dev/null 2>&1 || need_apt+=(prometheus)
# HdrHistogram's Java implementation, the reference knee's percentiles are held to (record/java_test.go)
{ command -v javac >/dev/null 2>&1 && [ -f /usr/share/java/hdrhistogram.jar ]; } || need_apt+=(default-jdk-headless libhdrhistogram-java)
command -v ip >/dev/null 2>&1 || need_apt+=(iproute2)        # the netns rehearsal (k8s)
command -v unshare >/dev/null 2>&1 || need_apt+=(util-linux) # its distinct host names
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "test.sh: installing ${need_apt[*]} (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "test.sh: missing ${need_apt[*]} and not root: tests that need them will skip and say so" >&2
  fi
fi
# podman builds the image for real (k8s TestMakeImageBuilds); it is the one
# tool whose absence only narrows a test, so a failed install is said, not fatal.
if ! command -v podman >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "test.sh: installing podman (apt-get)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman >/dev/null; } ||
      echo "test.sh: podman could not be installed: TestMakeImageBuilds will skip and say so" >&2
  else
    echo "test.sh: podman missing and not root: TestMakeImageBuilds will skip and say so" >&2
  fi
fi

go mod download

if dsn=$(./scripts/postgres-test.sh | tail -n 1) && [ -n "$dsn" ]; then
  export KNEE_TEST_POSTGRES="$dsn"
  echo "test.sh: PostgreSQL for tests at $KNEE_TEST_POSTGRES"
else
  echo "test.sh: could not start PostgreSQL: its tests will skip and say so" >&2
fi

go vet ./...
# Two passes. The race detector runs over every package with -short, which
# leaves out the real-time end-to-end tests: under -race (and with children
# that are race-built test binaries) a loopback run's timing says nothing.
# Then everything runs without it, one package at a time (-p 1), so two
# timing-sensitive packages never share the machine's cores.
if [ "${KNEE_TEST_NORACE:-}" != 1 ]; then
  go test -race -short -timeout 30m -count=1 ./...
fi
go test -p 1 -timeout 40m -count=1 ./...
