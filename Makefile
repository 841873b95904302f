.PHONY: test check build image man schema lab bench fuzz fault

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

# The knee image from the binary above, with no network access: FROM scratch,
# the binary, this machine's CA certificates (for https targets) and /tmp.
# IMAGE names it; DOCKER may be podman.
IMAGE ?= knee:dev
DOCKER ?= docker
CA_CERTS ?= /etc/ssl/certs/ca-certificates.crt
image: build
	rm -rf .image && mkdir -p .image/tmp && chmod 1777 .image/tmp
	cp knee Dockerfile.static .image/ && cp $(CA_CERTS) .image/ca-certificates.crt
	$(DOCKER) build --network=none -f .image/Dockerfile.static -t $(IMAGE) .image

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
