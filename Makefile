# obgate build, test and benchmark entry points. Every target installs what
# it needs on a Debian machine (apt packages, Go modules).

GO       ?= go
BIN      := bin
VERSION  := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
FUZZTIME ?= 30s
# Packages whose tests run against real MariaDB / obsim processes.
PKGS     := ./...


.PHONY: all build test test-fast bench chaos demo fuzz lint deps tidy clean

all: build

# deps installs the Debian packages the tests, the demo and the benchmarks
# use, when any is missing (iproute2: the adversarial tests put addresses
# on the loopback interface to log in from a non-loopback address). Node, npm, a JRE and MariaDB Connector/J run the
# third-party client programs of tools/clients (their npm packages are
# installed by the reactor tests, once, under bin/clients).
deps:
	@missing=""; \
	command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || missing="$$missing mariadb-server"; \
	command -v mariadb >/dev/null 2>&1 || missing="$$missing mariadb-client"; \
	command -v sysbench >/dev/null 2>&1 || missing="$$missing sysbench"; \
	command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing="$$missing haproxy"; \
	command -v perf >/dev/null 2>&1 || missing="$$missing linux-perf"; \
	command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || missing="$$missing iproute2"; \
	command -v node >/dev/null 2>&1 || missing="$$missing nodejs"; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	command -v java >/dev/null 2>&1 || missing="$$missing default-jre-headless"; \
	[ -f /usr/share/java/mariadb-java-client.jar ] || missing="$$missing libmariadb-java"; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
	@$(GO) mod download

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/obgate ./cmd/obgate
	@if [ -d tools/obsim/cmd/obsim ]; then $(GO) build -o $(BIN)/obsim ./tools/obsim/cmd/obsim; fi

# test: vet, then every package under the race detector, then the packages
# whose scheduling matters once more without it (netpoll swaps its buffer
# type under -race, so the production buffers are only tested that way).
test: deps build
	$(GO) vet ./...
	$(GO) test -race -timeout 20m $(PKGS)
	$(GO) test -count=1 -timeout 10m ./reactor/ ./mysqlproto/

# test-fast runs the unit tests alone, in seconds and with no server:
# every end-to-end test (MariaDB, obsim, obgate processes) skips under
# -short (testkit.EndToEnd). make test runs them all.
test-fast:
	$(GO) test -short ./...

bench: deps build
	$(GO) run ./bench/cmd/sysbench-suite --target obgate-net=-o,client_io_mode=net
	$(GO) run ./bench/cmd/memory-suite
	$(GO) run ./bench/cmd/gobench
	$(GO) run ./bench/cmd/routing-suite

# chaos breaks servers under load (stop, hang, slow, status changes, injected
# errors, a lost transaction, two MariaDB servers against HAProxy) and
# prints what the clients saw, PASS/FAIL per expectation; about 6 minutes.
# CHAOS_ARGS passes flags, e.g. CHAOS_ARGS='-quick' or '-scenarios stop,hang'.
chaos: deps build
	$(GO) run ./bench/cmd/chaos-suite $(CHAOS_ARGS)

demo: deps build
	$(GO) run ./tools/demo

# fuzz runs every fuzz target for FUZZTIME each (the seeds run in `make test`).
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
			echo "== $$pkg $$f"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

tidy:
	$(GO) mod tidy

clean:
	rm -rf $(BIN)
