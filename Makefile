.PHONY: test check build man schema lab bench fuzz fault

# Installs what is missing (Go modules, PostgreSQL, Chromium, tmux), starts
# PostgreSQL on loopback and runs every test. CI calls exactly this.
test:
	./scripts/test.sh

# The contributor's quick loop: vet and the short tests, nothing installed.
check:
	go vet ./...
	go test -short ./...

# A stripped (-s -w), reproducible binary: no build paths (-trimpath), no
# cgo (no C toolchain in the result), the commit it was built from when built
# in a git checkout (-buildvcs=auto; knee --version shows it). The same
# commit and Go version give the same bytes wherever it is built.
build:
	CGO_ENABLED=0 go build -trimpath -buildvcs=auto -ldflags '-s -w -buildid=' -o knee ./cmd/knee

# Man pages, one per command, into man/man1 (SOURCE_DATE_EPOCH dates them).
man:
	go run ./internal/cli/mangen man/man1

# The JSON Schemas of knee's JSON outputs, from the Go types, into schema/.
schema:
	go generate ./internal/cli

# Every fuzz target of the repository for FUZZTIME seconds each (default 10).
FUZZTIME ?= 10
fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

# knee on hostile inputs (year-long spans, torn files, /dev/zero, a full
# disk), each asserted to end right within a time and a memory bound.
fault:
	./scripts/fault-inputs.sh

# The main job: the article's coordinated-omission experiment on the Bookstore lab.
lab:
	go run ./cmd/knee lab co

bench:
	./bench/run.sh
