.PHONY: test build lab bench fuzz

# Installs what is missing (Go modules, PostgreSQL, Chromium), starts
# PostgreSQL on loopback and runs every test. CI calls exactly this.
test:
	./scripts/test.sh

build:
	go build -o knee ./cmd/knee

# The main job: the article's coordinated-omission experiment on the Bookstore lab.
lab:
	go run ./cmd/knee lab co

bench:
	./bench/run.sh
