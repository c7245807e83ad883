# Resolute. `make run` serves the UI at http://localhost:8080 with an embedded
# database; `make test` runs every test. Both install what is missing first.
SHELL := /bin/bash
GO ?= go
LDFLAGS := -X github.com/resolute-ml/resolute.Version=$(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
ARGS ?=
# go-nvml's cgo wrappers name NVML functions the driver headers deprecate;
# the warnings say nothing about Resolute.
export CGO_CFLAGS ?= -g -O2 -Wno-deprecated-declarations

.PHONY: run test build generate bench lint web setup setup-test clean k8s-up k8s-down objectstores-up objectstores-down

run: build ## build and serve at http://localhost:8080 (flags in ARGS=...)
	bin/resolute $(ARGS)

test: setup-test ## every test: unit, database, handlers, CLI and browser
	scripts/test.sh

build: setup ## bin/resolute and bin/det
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/resolute ./cmd/server
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/det ./cmd/det

generate: ## regenerate templ, sqlc and OpenAPI output (committed)
	$(GO) tool templ generate -path views
	$(GO) tool sqlc generate
	$(GO) run ./cmd/openapigen

bench: setup-test ## benchmarks, with their figures
	scripts/test.sh -run '^$$' -bench .

lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

k8s-up: setup-test ## a local Kubernetes control plane (etcd, kube-apiserver, kube-scheduler, kwok); prints its KUBECONFIG
	scripts/k8s.sh up

k8s-down: ## stop the control plane k8s-up started
	scripts/k8s.sh down

objectstores-up: setup-test ## local MinIO, fake-gcs-server and Azurite for the storage tests; prints their RESOLUTE_TEST_* exports
	scripts/objectstores.sh up

objectstores-down: ## stop the object stores objectstores-up started
	scripts/objectstores.sh down

web: ## front-end libraries from npm into web/static/vendor
	cd web && npm ci --no-audit --no-fund --loglevel=error && ./vendor.sh

setup:
	@scripts/setup.sh run

setup-test:
	@scripts/setup.sh test

clean:
	rm -rf bin web/node_modules web/static/vendor
