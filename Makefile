# watchdogd — see README.md. Every target works offline once modules are
# downloaded; tools are installed with `go install` into ./bin, never added
# to go.mod.
SHELL     := /bin/bash
GO        ?= go
BIN       := $(CURDIR)/bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
# Fuzz budgets are execution counts, about 10 s each on 2 cores: a
# duration (-fuzztime=10s) races Go 1.26's fuzz coordinator at its deadline
# and fails with a bare "context deadline exceeded", no input found
# (golang/go#75804, fixed in Go 1.27). FUZZTIME=2m sets one budget for all,
# for a longer local run.
FUZZTIME  ?=
FUZZ_RESOLVE ?= 4000x
FUZZ_RESOLVE_PG ?= 4000x
FUZZ_STAMPS  ?= 1000000x
FUZZ_CONFIG  ?= 150000x
FUZZ_PROBE   ?= 80000x
FUZZ_ESCAPE  ?= 40000x
FUZZ_SNAPSHOT ?= 300x
GOLANGCI_LINT_VERSION := v2.15.0
HELM_VERSION          := v3.22.0
KUBECONFORM_VERSION   := v0.7.0
# promtool (check and unit-test the chart's alerts) comes from Prometheus'
# module; its v0.3xx tags are Prometheus 3.x. It is built with
# remove_all_sd, Prometheus' own tag that leaves out the service-discovery
# plugins (AWS, Azure, GCE, Kubernetes…): `check rules` and `test rules` use
# none, and a cold build took 212 s instead of 454 s on 2 cores.
PROMETHEUS_VERSION    := v0.316.0
# Schemas for the chart come from these modules' sources, offline.
K8S_VERSION           := v1.34.4
PROMETHEUS_OPERATOR_VERSION := v0.85.0
SCHEMAS   := $(CURDIR)/.cache/schemas/$(K8S_VERSION)
CHART_TOOLS := $(BIN)/helm $(BIN)/kubeconform $(BIN)/promtool $(SCHEMAS)/.done
# A real Alertmanager for the fault suite's outlet tests. v0.28.1 is the
# newest whose module builds with `go install`: later modules lack the web
# UI's built assets that ui/web.go embeds.
ALERTMANAGER_VERSION  := v0.28.1
TOOLS     := $(CHART_TOOLS) $(BIN)/alertmanager

export GOTOOLCHAIN := local
# Everything is built with -trimpath, as the binary ships: the test
# binaries, the binary the end-to-end tests build and `make build` then
# share one build of the dependencies. Without it a cold .ci/run compiled
# them all once more for `make build` alone (84 s on 2 cores).
export GOFLAGS := $(strip $(GOFLAGS) -trimpath)

.PHONY: all build dist image test-image lint-workflows test test-unit test-race fuzz lint demo chart chart-tools tools bench bench-quick test-faults soak clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=auto -ldflags '$(LDFLAGS)' -o $(BIN)/watchdogd ./cmd/watchdogd

## dist: release archives, one static binary per PLATFORMS entry, with
## their SHA-256 sums (the release workflow runs it with VERSION=<tag>).
PLATFORMS ?= linux/amd64 linux/arm64
DIST      := $(CURDIR)/dist
dist:
	rm -rf $(DIST) && mkdir -p $(DIST)
	set -e; for p in $(PLATFORMS); do \
	  os=$${p%/*} arch=$${p#*/} d=watchdogd_$(VERSION)_$${p%/*}_$${p#*/}; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -buildvcs=auto -ldflags '$(LDFLAGS)' -o $(DIST)/$$d/watchdogd ./cmd/watchdogd; \
	  cp README.md $(DIST)/$$d/; \
	  tar -C $(DIST) --owner=0 --group=0 -czf $(DIST)/$$d.tar.gz $$d; \
	done
	cd $(DIST) && sha256sum *.tar.gz > SHA256SUMS

## image: the image, FROM scratch, around the binary `make build` made (no
## compiler, nothing pulled; see the Dockerfile). ENGINE is podman, or
## docker where its engine answers (`docker info`); podman runs with runc
## and cgroupfs (PODMAN_FLAGS), which work where crun does not (cgroup v1
## hosts). REVISION, the image's revision label, is the commit the binary
## names (a clone stamps it), else the checkout's HEAD.
ENGINE    ?= $(shell command -v podman >/dev/null 2>&1 && echo podman || { docker info >/dev/null 2>&1 && echo docker; } || echo podman)
PODMAN_FLAGS ?= --runtime runc --cgroup-manager cgroupfs
ENGINE_CMD = $(ENGINE) $(if $(filter podman,$(notdir $(ENGINE))),$(PODMAN_FLAGS))
# VERSION once, as LDFLAGS took it: git describe --dirty again in a later
# recipe would name the image and test it for a version its binary does
# not have if a file changed meanwhile.
VERSION   := $(VERSION)
IMAGE     ?= watchdogd:$(VERSION)
REVISION  ?= $(or $(shell $(GO) version -m $(BIN)/watchdogd 2>/dev/null | awk '$$2 == "vcs.revision" {print $$3}'),$(shell git rev-parse HEAD 2>/dev/null),unknown)
IMAGE_CONTEXT := $(CURDIR)/.cache/image
# No cached layers: podman 4.3 reused a LABEL layer built with other
# build-args (a wrong revision label). Podman's --layers=false also leaves
# no intermediate images behind; the build is two COPYs either way.
IMAGE_BUILD_FLAGS ?= $(if $(filter podman,$(notdir $(ENGINE))),--layers=false,--no-cache)
image: build
	@if [ "$(notdir $(ENGINE))" = docker ] && ! docker info >/dev/null 2>&1; then \
	  echo "make image: docker has no engine here (docker info fails); install podman, or ENGINE=podman" >&2; exit 1; fi
	hack/image-context.sh $(IMAGE_CONTEXT) $(BIN)/watchdogd:$(shell $(GO) env GOARCH)
	$(ENGINE_CMD) build $(IMAGE_BUILD_FLAGS) -f Dockerfile -t $(IMAGE) --build-arg TARGETARCH=$(shell $(GO) env GOARCH) \
	  --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) $(IMAGE_CONTEXT)

## test-image: runs the image as a user would, read-only and as uid 65532,
## through hack/imagetest: version, demo, check-config (a time zone: tzdata
## is embedded), a TLS call to a loopback stand-in trusted only through a
## mounted CA, the daemon turning ready on the demo database, SIGTERM exit
## 0; then the README's container lines as printed. Its containers are
## removed by name before and after, whatever happens.
IMAGE_TEST_NAME ?= watchdogd-image-test
IMAGE_TEST_CONTAINERS := $(addprefix $(IMAGE_TEST_NAME)-,version shell demo check untrusted run readme-a readme-b readme-c)
# Explicit limits: podman's defaults come from the host, which may be
# unlimited and more than runc may set in a container here.
IMAGE_RUN_FLAGS ?= --ulimit nofile=1024:1024 --ulimit nproc=1024:1024
test-image: image
	@cleanup() { for c in $(IMAGE_TEST_CONTAINERS); do $(ENGINE_CMD) rm -f $$c >/dev/null 2>&1 || true; done; }; \
	cleanup; trap cleanup EXIT; trap 'exit 130' INT; trap 'exit 143' TERM; \
	$(GO) test -count=1 -tags image -timeout 10m -v -run '^(TestImage|TestREADMEContainerLines)$$' ./hack/imagetest -args \
	  -engine '$(ENGINE_CMD)' -run-flags '$(IMAGE_RUN_FLAGS)' -image '$(IMAGE)' -name '$(IMAGE_TEST_NAME)' \
	  -version '$(VERSION)'

## lint-workflows: actionlint over .github/workflows (ci.yml, release.yml),
## with shellcheck over their run: steps where it is installed (.ci/run
## installs Debian's).
ACTIONLINT_VERSION := v1.7.12
lint-workflows: $(BIN)/actionlint
	$(BIN)/actionlint -shellcheck="$$(command -v shellcheck || true)" -pyflakes= .github/workflows/*.yml

$(BIN)/actionlint:
	GOBIN=$(BIN) $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)

## test: everything CI runs — unit and integration tests against real SQLite
## and PostgreSQL, then the differential fuzzers for a short while, then the
## chart's checks. The chart's tools and the fault suite's Alertmanager,
## minutes to build from a cold cache and needed by no unit test, build at
## the lowest CPU priority while the tests run:
## those spend most of their time waiting on servers, processes and timers.
test:
	@$(MAKE) --no-print-directory -j2 test-unit tools
	@$(MAKE) --no-print-directory fuzz chart

test-unit:
	$(GO) test -count=1 -timeout 20m ./...

fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzResolveSQLite$$' -fuzztime=$(or $(FUZZTIME),$(FUZZ_RESOLVE)) -fuzzminimizetime=2s ./internal/authority
	$(GO) test -run='^$$' -fuzz='^FuzzResolvePostgres$$' -fuzztime=$(or $(FUZZTIME),$(FUZZ_RESOLVE_PG)) -fuzzminimizetime=2s ./internal/authority
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(or $(FUZZTIME),$(FUZZ_STAMPS)) -fuzzminimizetime=2s ./internal/kandevtime
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(or $(FUZZTIME),$(FUZZ_CONFIG)) -fuzzminimizetime=2s ./internal/config
	$(GO) test -run='^$$' -fuzz='^FuzzProbeJSON$$' -fuzztime=$(or $(FUZZTIME),$(FUZZ_PROBE)) -fuzzminimizetime=2s ./internal/kandev
	$(GO) test -run='^$$' -fuzz='^FuzzEscapers$$' -fuzztime=$(or $(FUZZTIME),$(FUZZ_ESCAPE)) -fuzzminimizetime=2s ./internal/notify/slack
	$(GO) test -run='^$$' -fuzz='^FuzzSnapshotAgainstRule$$' -fuzztime=$(or $(FUZZTIME),$(FUZZ_SNAPSHOT)) -fuzzminimizetime=2s ./internal/kandev

## test-race: the unit and integration tests under the race detector; the
## watchdogd binary the end-to-end tests run is built with it too, and a race
## it reports fails them. Needs cgo (gcc). Run by .ci/run after make test.
test-race:
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 30m ./...

## test-faults: the real binary under outages, crashes, rate limits, bad rows
## and hostile input — short versions (a 20s outage, a 90s soak, 50 kills).
## Run by .ci/run after make test. Its outlet tests run a real Alertmanager.
OUTAGE ?= 20s
SOAK   ?= 90s
KILLS  ?= 50
FAULTS_TIMEOUT ?= 30m
test-faults: $(BIN)/alertmanager
	$(GO) test -count=1 -tags faults -timeout $(FAULTS_TIMEOUT) -run '^(TestFault|TestSoak)' -v ./cmd/watchdogd -args -outage=$(OUTAGE) -soak=$(SOAK) -kills=$(KILLS) -alertmanager=$(BIN)/alertmanager 2>&1 | tee .cache/faults.log | grep --line-buffered -E '^(=== RUN|--- |\s+\w+_test.go:[0-9]+:|ok|FAIL|PASS)'; test $${PIPESTATUS[0]} -eq 0

## soak: the full versions whose figures go into docs/reliability.md
## (a 2-minute outage, a 10-minute soak, 100 kills).
soak:
	$(MAKE) test-faults OUTAGE=2m SOAK=10m KILLS=100 FAULTS_TIMEOUT=90m

## demo: builds bin/watchdogd (from a cold Go cache its first build
## compiles every dependency, minutes on 2 cores), then a kandev-shaped demo
## database, and shows what watchdogd finds in it and would send. It says so
## before the build starts. KEEP=DIR keeps the database in DIR with a
## config that runs the daemon on it (watchdogd demo --keep DIR).
KEEP ?=
demo:
	@echo "make demo: building bin/watchdogd (the first build compiles every dependency: a few minutes on a cold cache),"
	@echo "then a demo kandev database $(if $(KEEP),kept in $(KEEP),in a temporary directory) and one cycle over it."
	@$(MAKE) --no-print-directory build
	$(BIN)/watchdogd demo --config config/demo.yaml $(if $(KEEP),--keep '$(KEEP)')

lint: $(BIN)/golangci-lint
	$(GO) vet ./...
	$(BIN)/golangci-lint run ./...

$(BIN)/golangci-lint:
	GOBIN=$(BIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

## bench: the scan against the floor and a naive per-session watchdog, on
## SQLite and PostgreSQL, small, medium and large (see docs/benchmarks.md).
bench: build
	$(GO) run ./cmd/watchdogd-bench -sizes small,medium,large -explain .cache/explain.md

## bench-quick: the small size only, under a minute.
bench-quick: build
	$(GO) run ./cmd/watchdogd-bench -sizes small -runs 5

## chart: helm lint, helm template (default, sidecar, splice and the other
## ci/ values), kubeconform against schemas generated offline, the rendered
## config through check-config, values.schema.json's refusals, the alerts
## through promtool's rule checks and unit tests, the dashboard's and
## alerts' queries against the metrics watchdogd exports, the splice patch
## applied to a kandev-shaped Deployment (hack/splicecheck, a module of its
## own: Kubernetes' strategic merge without Kubernetes in go.mod), NOTES.txt
## and helm package.
chart: build $(CHART_TOOLS)
	$(GO) build -o $(BIN)/promcheck ./hack/promcheck
	cd hack/splicecheck && $(GO) test -count=1 . && $(GO) build -o $(BIN)/splicecheck .
	hack/chart-check.sh $(BIN)/helm $(BIN)/kubeconform $(SCHEMAS) $(BIN)/watchdogd $(BIN)/promtool $(BIN)/promcheck $(BIN)/splicecheck

chart-tools:
	@nice -n 19 $(MAKE) --no-print-directory $(CHART_TOOLS)

tools:
	@nice -n 19 $(MAKE) --no-print-directory $(TOOLS)

$(BIN)/alertmanager:
	GOBIN=$(BIN) $(GO) install github.com/prometheus/alertmanager/cmd/alertmanager@$(ALERTMANAGER_VERSION)

$(BIN)/helm:
	GOBIN=$(BIN) $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

$(BIN)/kubeconform:
	GOBIN=$(BIN) $(GO) install github.com/yannh/kubeconform/cmd/kubeconform@$(KUBECONFORM_VERSION)

$(BIN)/promtool:
	GOBIN=$(BIN) $(GO) install -tags remove_all_sd github.com/prometheus/prometheus/cmd/promtool@$(PROMETHEUS_VERSION)

$(SCHEMAS)/.done:
	$(GO) run ./hack/schemagen -k8s $(K8S_VERSION) -prometheus-operator $(PROMETHEUS_OPERATOR_VERSION) -out $(SCHEMAS)
	touch $@

clean:
	rm -rf $(BIN) .cache $(DIST)
