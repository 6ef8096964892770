# watchdogd — see README.md. Every target works offline once modules are
# downloaded; tools are installed with `go install` into ./bin, never added
# to go.mod.
GO        ?= go
BIN       := $(CURDIR)/bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
FUZZTIME  ?= 10s
GOLANGCI_LINT_VERSION := v2.15.0

export GOTOOLCHAIN := local

.PHONY: all build test test-unit fuzz lint demo clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/watchdogd ./cmd/watchdogd

## test: everything CI runs — unit and integration tests against real SQLite
## and PostgreSQL, then the differential fuzzers for a short while.
test: test-unit fuzz

test-unit:
	$(GO) test -count=1 -timeout 20m ./...

fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzResolveSQLite$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=2s ./internal/authority
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=2s ./internal/kandevtime

demo:
	$(GO) run ./cmd/watchdogd demo --config config/demo.yaml

lint: $(BIN)/golangci-lint
	$(GO) vet ./...
	$(BIN)/golangci-lint run ./...

$(BIN)/golangci-lint:
	GOBIN=$(BIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

clean:
	rm -rf $(BIN)
