.PHONY: test check build lab bench fuzz

# Installs what is missing (Go modules, PostgreSQL, Chromium, tmux), starts
# PostgreSQL on loopback and runs every test. CI calls exactly this.
test:
	./scripts/test.sh

# The contributor's quick loop: vet and the short tests, nothing installed.
check:
	go vet ./...
	go test -short ./...

build:
	go build -o knee ./cmd/knee

# Every fuzz target of the repository for FUZZTIME seconds each (default 10).
FUZZTIME ?= 10
fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

# The main job: the article's coordinated-omission experiment on the Bookstore lab.
lab:
	go run ./cmd/knee lab co

bench:
	./bench/run.sh
