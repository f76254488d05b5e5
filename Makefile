# chemmy: make run starts the suite; make test runs every test.
# Tools are installed at pinned versions into ./bin (nothing global).

SHELL := /bin/bash
BIN   := $(CURDIR)/bin
export PATH := $(BIN):$(PATH)
export GOFLAGS := -buildvcs=false

BUF_VERSION            := v1.75.0
PROTOC_GEN_GO_VERSION  := v1.36.12
PROTOC_GEN_GRPC_VERSION := v1.6.2
GRPCURL_VERSION        := v1.9.4
GHZ_VERSION            := v0.120.0
KUSTOMIZE_VERSION      := v5.8.2

# The build's version and revision, stamped into every binary the Makefile
# builds (chemmy version, chemmy_build_info; services/kit/buildinfo).
VERSION  ?= $(shell git describe --tags --dirty 2>/dev/null)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS  := -X github.com/chemmy/chemmy/services/kit/buildinfo.version=$(VERSION) -X github.com/chemmy/chemmy/services/kit/buildinfo.revision=$(REVISION)

MODULES  := proto services shoe-svc wallet-svc table-svc gateway cmd
PACKAGES := $(addsuffix /...,$(addprefix ./,$(MODULES)))
DATA_DIR ?= .chemmy
# WALLET=seamless: the players' money in an operator's wallet (the reference
# operator wallet, started on 127.0.0.1:7090); transfer: in wallet-svc.
WALLET ?= transfer

.PHONY: deploy-check run test test-short generate check-generated lint fmt vet bench load load-wallet tools tool-grpcurl tool-buf clean

## run: start embedded NATS and all four services; prints the gateway address; Ctrl-C stops
run:
	@go build -ldflags "$(LDFLAGS)" -o $(BIN)/chemmy ./cmd/chemmy
	@$(BIN)/chemmy run -data-dir $(DATA_DIR) -wallet $(WALLET)

## test: every test of every module, with the race detector (installs grpcurl for the e2e test)
test: tool-grpcurl
	@test -n "$$CHEMMY_CHROME" || command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || command -v google-chrome >/dev/null 2>&1 \
		|| echo "NOTICE: no Chromium found: the browser tests of cmd/e2e will SKIP (under CI=1 they fail); apt-get install chromium"
	go test -race -count=1 -timeout 20m $(PACKAGES)

## test-short: the fast tests only (no end-to-end, no crash tests)
test-short:
	go test -short -count=1 $(PACKAGES)

## generate: regenerate the Go code of the protos
generate: tool-buf
	buf generate
	buf build -o gateway/gateway/chemmy.binpb

## check-generated: fail if the committed generated code is not what generate makes
check-generated: generate
	@git diff --exit-code -- proto/gen gateway/gateway/chemmy.binpb || (echo "generated code is out of date: run make generate and commit" && exit 1)
	@test -z "$$(git status --porcelain -- proto/gen gateway/gateway/chemmy.binpb)" || (echo "untracked generated files: run make generate and commit" && exit 1)

## lint: buf lint, buf breaking (against the previous commit), gofmt, go vet
lint: tool-buf fmt vet
	buf lint proto
	@if git rev-parse -q --verify HEAD~1 >/dev/null; then \
		buf breaking proto --against '.git#ref=HEAD~1,subdir=proto'; \
	else echo "buf breaking: no previous commit (shallow clone), skipped"; fi

fmt:
	@out=$$(gofmt -l $(MODULES) | grep -v '\.pb\.go$$' || true); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	go vet $(PACKAGES)

## deploy-check: the Kubernetes manifests, offline: kustomize builds the base and every overlay, each
## object decodes strictly into its API type, and the policies hold (deploy/check, its own module)
deploy-check:
	@test -x $(BIN)/kustomize || GOBIN=$(BIN) go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
	cd deploy/check && GOWORK=off KUSTOMIZE=$(BIN)/kustomize go test -count=1 ./...

## bench: the benchmarks of every module
bench:
	go test -run '^$$' -bench . -benchmem $(PACKAGES)

## load: many tables playing coups at once through the gateway (coups/s, PlaceBet p99; not part of test)
load:
	./deploy/local/load.sh

## load-idle: the fsyncs/s and CPU of TABLES (1000) seated idle tables whose bank offers time out every OFFER (3s)
.PHONY: load-idle
load-idle:
	MODES=idle TABLES=$${TABLES:-1000} ./deploy/local/load.sh

## load-wallet: wallet-svc settlements/s and p99 with ghz, vs a no-op RPC and raw bbolt commits (not part of test)
load-wallet:
	@test -x $(BIN)/ghz || GOBIN=$(BIN) go install github.com/bojand/ghz/cmd/ghz@$(GHZ_VERSION)
	GHZ=$(BIN)/ghz ./wallet-svc/load/run.sh

tools: tool-buf tool-grpcurl
	GOBIN=$(BIN) go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(BIN) go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GRPC_VERSION)
	GOBIN=$(BIN) go install github.com/bojand/ghz/cmd/ghz@$(GHZ_VERSION)

tool-grpcurl:
	@test -x $(BIN)/grpcurl || GOBIN=$(BIN) go install github.com/fullstorydev/grpcurl/cmd/grpcurl@$(GRPCURL_VERSION)

tool-buf:
	@test -x $(BIN)/buf || GOBIN=$(BIN) go install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
	@test -x $(BIN)/protoc-gen-go || GOBIN=$(BIN) go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	@test -x $(BIN)/protoc-gen-go-grpc || GOBIN=$(BIN) go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GRPC_VERSION)

clean:
	rm -rf $(BIN) $(DATA_DIR)

## seamless-soak: seamless wallet mode against the reference operator wallet under
## random timeouts, 5xx, duplicate and late answers and restarts of chemmy, then both
## sides' books compared (ROUNDS=n chemin de fer rounds, default 3000)
.PHONY: seamless-soak
ROUNDS ?= 3000
seamless-soak:
	CHEMMY_SEAMLESS_ROUNDS=$(ROUNDS) go test -count=1 -timeout 60m -run '^TestSeamlessWalletUnderFaults$$' -v ./cmd/e2e

## sim: the deterministic simulation of the whole suite under faults (cmd/sim/README.md).
## SEED=n replays one seed; SEEDS=N runs N seeds from SEED_BASE (default 1);
## STEPS=n steps per seed; AVOID=a,b scenario switches (none: simulate everything)
.PHONY: sim
SEEDS ?= 10
sim:
	SIM_SEED=$(SEED) SIM_SEEDS=$(SEEDS) SIM_SEED_BASE=$(SEED_BASE) SIM_STEPS=$(STEPS) SIM_AVOID=$(AVOID) \
		go test -count=1 -timeout 60m -run '^TestSim$$' -v ./cmd/sim

## mutate: the mutation score of the rules, the game cores, the wallet's holds and settlements, the shoe's
## shuffle/cut/burn and the outbox relay (cmd/mutate; docs/testing.md): each mutant against its package's
## short tests, the survivors then against the simulation (SIM_SEEDS=4); prints the survivors and, last,
## "mutation score: killed/total". MUTATE_PKGS=rules,shoe,... MUTATE_FILE=substr MUTATE_LIMIT=n (a sample)
## MUTATE_SIM=0 (no simulation) MUTATE_ONLY=file (a previous run's survivors). Not part of make test.
.PHONY: mutate
mutate:
	SIM_SEEDS=$${SIM_SEEDS:-4} go run ./cmd/mutate

## cluster: the Kubernetes topology as real processes on 127.0.0.1 (cmd/cluster): a 3-node NATS
## JetStream cluster, SHARDS table-svc shards (default 2) each with its shoe-svc, wallet-svc, two
## gateways, mutual TLS; builds the binaries into ./bin (nats-server at cmd/go.mod's version);
## prints the addresses; Ctrl-C stops it. DATA=dir keeps the data there (default: a temporary dir),
## TOKENS=file is the gateways' token file (default deploy/local/tokens.yaml), RATE_LIMIT their
## calls per second per caller (default 20; -1: none, as a load run needs)
## cluster-test: its test alone (TestClusterRehearsal, also part of make test)
## cluster-scaling: the same load on 1, 2 and 3 shards: coups/s and CPU per coup of each process
## (TABLES=24, DURATION=20s per run); deploy/README.md reads the figures
.PHONY: cluster cluster-test cluster-scaling
cluster:
	@go build -ldflags "$(LDFLAGS)" -o $(BIN)/chemmy ./cmd/chemmy
	@$(BIN)/chemmy cluster -bin-dir $(BIN) -shards $${SHARDS:-2} -data-dir "$${DATA:-}" -tokens "$${TOKENS:-deploy/local/tokens.yaml}" -rate-limit "$${RATE_LIMIT:-0}"
cluster-test:
	go test -count=1 -timeout 10m -run '^TestClusterRehearsal$$' -v ./cmd/cluster
cluster-scaling:
	@go build -ldflags "$(LDFLAGS)" -o $(BIN)/chemmy ./cmd/chemmy
	@$(BIN)/chemmy cluster -bin-dir $(BIN) -scaling 1,2,3 -tables $${TABLES:-24} -duration $${DURATION:-20s}
