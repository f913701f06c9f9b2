# globaladdr: CoreDNS with the globaladdr plugin.
#
#   make            build ./coredns (static)
#   make demo       run the demo: embedded etcd, internal view on :1053, external on :1054
#   make test       everything CI runs, the pipeline test with the programs of kube-bins too
#   make kube-bins  build kube-apiserver and kubectl into bin/kube/ (test/kubernetes)
#   make externaldns-bin  build external-dns into bin/kube/ (test/externaldns/bin; Go 1.27)
#   make helm       build helm into bin/helm/ (test/helm), for the chart's tests
#   make chart-files  copy monitoring/ rules and dashboard into the chart
#   make acme-bins  build Pebble and acmeclient into bin/acme/ (test/acme)
#   make etcd-bins  build etcd's servers 3.5 and 3.6 into bin/etcd/ (test/etcd), for the etcd release tests
#   make image      build the container image for the host (docker, else buildah);
#                   PLATFORMS=linux/amd64,linux/arm64,linux/arm/v7: one multi-platform image
#   make bin/linux_arm64/coredns  ./coredns cross-compiled for a platform (linux_arm_v7: linux/arm/v7)
#   make dist       the release's files into dist/: binaries, image archive, chart, SBOM, SHA256SUMS
#   make push       push dist/'s image and chart to $(REGISTRY) (REGISTRY_USER, REGISTRY_PASSWORD, PLAIN_HTTP=1)

GO       ?= go
# VERSION is globaladdr's version, which `coredns -version` and the image's
# tag show: the git tag (v0.1.0, or v0.1.0-3-gabc1234 three commits after
# it, -dirty with uncommitted changes); without a tag, the VERSION file's
# release with the commit (0.1.0-dev-gabc1234).
VERSION  ?= $(shell git describe --tags --match 'v*' --dirty 2>/dev/null || \
	echo "$$(cat VERSION)-dev$$(git rev-parse --short HEAD 2>/dev/null | sed 's/^/-g/')")
# COMMIT is the commit built, which `coredns -version` prints after the Go
# release (CoreDNS's coremain.GitCommit; outside a git checkout, nothing).
COMMIT   ?= $(shell git rev-parse --short HEAD 2>/dev/null)
LDFLAGS  := -s -w -X main.version=$(VERSION) -X github.com/coredns/coredns/coremain.GitCommit=$(COMMIT)
BINARY   := coredns
IMAGE    ?= coredns-globaladdr
BASE     ?= gcr.io/distroless/static-debian12:nonroot
# PLATFORMS is what make image builds for: empty, the host; else a
# comma-separated list of platforms (OS/ARCH[/VARIANT]).
PLATFORMS ?=
# TEST_PLATFORMS are the platforms of a release (make dist), whose image
# test/image_platforms_test.go checks in dist/'s archive.
TEST_PLATFORMS := linux/amd64,linux/arm64,linux/arm/v7

export CGO_ENABLED := 0

.PHONY: chart-files all build generate demo test externaldns externaldns-bin kube-bins helm acme-bins etcd-bins lint image dist push bench fuzz soak clean

all: build

build: $(BINARY)

$(BINARY): FORCE
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $@ .

FORCE:

# bin/OS_ARCH[_VARIANT]/coredns is ./coredns cross-compiled by Go for the
# platform OS/ARCH[/VARIANT]: GOOS and GOARCH, and for arm GOARM from the
# variant (bin/linux_arm_v7/coredns: GOARM=7). It is static, as ./coredns, so
# every platform's binary builds here without emulation. The first build for
# a platform other than the host's compiles CoreDNS anew: about 170
# CPU-seconds, 1.5 to 2.5 minutes on 2 cores; later ones relink in seconds.
bin/%/$(BINARY): FORCE
	$(call goenv,$(subst _, ,$*)) $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $@ .

# goenv is the Go environment that builds for the platform $(1), given as
# words: linux arm v7 is GOOS=linux GOARCH=arm GOARM=7.
goenv = GOOS=$(word 1,$(1)) GOARCH=$(word 2,$(1))$(if $(filter arm,$(word 2,$(1))), GOARM=$(patsubst v%,%,$(word 3,$(1))))

comma := ,
# platforms is the list $(1) of comma-separated platforms as words.
platforms = $(subst $(comma), ,$(1))
# platform_bin is the cross-compiled binary for the platform $(1):
# linux/arm/v7 is bin/linux_arm_v7/coredns; platform_bins are those of the
# comma-separated platforms $(1).
platform_bin = bin/$(subst /,_,$(1))/$(BINARY)
platform_bins = $(foreach p,$(call platforms,$(1)),$(call platform_bin,$(p)))

generate:
	$(GO) generate ./...

# chart-files copies monitoring/'s rules and dashboard into the chart (helm
# warns on links out of a chart); test/chart_files_test.go checks they agree.
# A file that is the same already is left alone, and a changed one replaced
# whole (a copy renamed over it): make test's dist runs this while the chart's
# tests read the chart.
CHART_FILES := globaladdr-rules.yaml etcd-rules.yaml globaladdr-dashboard.json
chart-files:
	for f in $(CHART_FILES); do cmp -s monitoring/$$f charts/globaladdr/files/$$f || \
		{ cp monitoring/$$f charts/globaladdr/files/$$f.tmp && mv charts/globaladdr/files/$$f.tmp charts/globaladdr/files/$$f; }; done

# demo builds ./coredns and the demo in one go build, so that the packages
# they share compile once (with the same flags) and the rest of both in
# parallel, then runs the demo. go build names the root package's binary
# after the module, hence the mv. README.md has the timings.
demo:
	@echo "demo: building ./coredns (CoreDNS with all its plugins and globaladdr) and bin/demo (an embedded etcd)."
	@echo "demo: the first build downloads about 210 modules ('go: downloading'), then compiles about 1500 packages:"
	@echo "demo: about 6 minutes on 2 idle cores. Later builds take seconds."
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/ . ./demo
	mv -f bin/globaladdr $(BINARY)
	@echo "demo: starting etcd and CoreDNS ..."
	bin/demo -coredns ./$(BINARY)

# test runs what CI runs: vet, staticcheck, actionlint, every test under
# -race (which needs cgo; the pipeline test with the programs of kube-bins
# and externaldns-bin, the chart's tests with helm, the certificate test with the programs of
# acme-bins, the etcd release tests with the servers of etcd-bins), the
# conformance tests against external-dns, and a short fuzz pass. The package
# tests spend most of their time waiting for the servers they start, so
# three things run beside them, one after the other: make dist on scratch
# (the cross builds of TEST_PLATFORMS, the image archive, chart and SBOM,
# into the checkout's dist/), then the release tests that need it
# (RELEASE_TESTS, left out of the package tests: dist/'s files, each
# platform of its image, make push to a local registry), then the
# conformance tests and the fuzz pass (one worker, a count of runs per
# target rather than a duration: Go 1.26's fuzzing can fail a target at the
# end of a duration, go.dev/issue/75804, and more so beside the package
# tests). A cold run takes minutes less than one after the other. It fails
# if any of them fails. dist/'s image is then on scratch: run make dist
# again before make push.
RELEASE_TESTS := ^(TestImagePlatforms|TestDist|TestPush)$$
test: build lint kube-bins externaldns-bin helm acme-bins etcd-bins
	@CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 40m -skip '$(RELEASE_TESTS)' ./... & tests=$$!; \
	status=0; \
	{ $(MAKE) dist BASE=scratch && \
		CGO_ENABLED=1 $(GO) test -race -count=1 -run '$(RELEASE_TESTS)' ./test/; } || status=$$?; \
	{ $(MAKE) externaldns && $(MAKE) fuzz FUZZTIME=20000x FUZZTIME_SIGNER=1000x FUZZFLAGS=-parallel=1; } || status=$$?; \
	wait $$tests || status=$$?; \
	exit $$status

# externaldns checks internal/externaldns, which the tests and the demo write
# records with, against external-dns's own coredns provider and TXT registry,
# and the webhook plugin against its webhook provider and TXT registry: each
# directory of test/externaldns/ is a module of its own pinning one
# release, so that the main module does not depend on external-dns. The
# newest (EXTERNALDNS_LATEST) needs Go 1.27: it runs with
# GOTOOLCHAIN=$(EXTERNALDNS_GO), which the go command fetches through the
# module proxy the first time (76 MB), and compiles what it imports anew
# under -race (no build cache is shared between Go releases): about 500
# CPU-seconds the first time. A module that cannot be
# fetched through the module proxy skips that release, and fails under
# CI=true.
EXTERNALDNS_LATEST := test/externaldns/latest
EXTERNALDNS_GO := go1.27.3
EXTERNALDNS := $(EXTERNALDNS_LATEST) test/externaldns/legacy
externaldns:
	@set -e; for m in $(EXTERNALDNS); do \
		toolchain=; if [ $$m = $(EXTERNALDNS_LATEST) ]; then toolchain=GOTOOLCHAIN=$(EXTERNALDNS_GO); fi; \
		if ! (cd $$m && env $$toolchain CGO_ENABLED=1 $(GO) list -deps -test ./... >/dev/null); then \
			$(call cannot_fetch,$$m); \
			continue; \
		fi; \
		echo "externaldns: $$m"; \
		(cd $$m && env $$toolchain CGO_ENABLED=1 $(GO) test -race -count=1 ./...); \
	done

# externaldns-bin builds bin/kube/external-dns, which the pipeline tests
# (test/pipeline_test.go, test/externaldns_run_test.go and those that run
# it) run: the release EXTERNALDNS_LATEST pins, built by
# test/externaldns/bin/build.sh from a copy of its module source with the
# providers the module proxy cannot build, and those no test runs, left out
# (coredns, webhook, rfc2136, pdns and inmemory remain). It needs Go 1.27
# (GOTOOLCHAIN=$(EXTERNALDNS_GO)), so nothing is shared with the other
# builds: the first time about 240 CPU-seconds, 2 minutes on 2 idle cores;
# later a copy of the source and a link, seconds. A module that cannot be
# fetched through the module proxy skips the
# build (and the tests skip), and fails under CI=true.
externaldns-bin:
	@set -e; export GOTOOLCHAIN=$(EXTERNALDNS_GO); \
	if ! (cd $(EXTERNALDNS_LATEST) && $(GO) mod download sigs.k8s.io/external-dns); then \
		$(call cannot_fetch,$(EXTERNALDNS_LATEST)); \
		exit 0; \
	fi; \
	sh test/externaldns/bin/build.sh $(CURDIR)/bin/kube/external-dns

# kube-bins builds the programs the pipeline test (test/pipeline_test.go)
# runs into bin/kube/: kube-apiserver and kubectl from k8s.io/kubernetes,
# with its staging modules replaced by their published v0.x versions
# (external-dns is externaldns-bin's). test/kubernetes pins them: a module
# of its own, whose go.mod lists them as tools, so that the main module does
# not depend on them. One go build compiles what they share once: about
# 2300 packages (700 fewer than with external-dns), about 6 minutes on 2
# cores the first time; later it finds them up to date in seconds. A module
# that cannot be fetched through the module proxy skips the build (and the test
# skips), and fails under CI=true.
KUBE := test/kubernetes
kube-bins:
	@set -e; cd $(KUBE); \
	if ! $(GO) list -deps tool >/dev/null; then \
		$(call cannot_fetch,$(KUBE)); \
		exit 0; \
	fi; \
	k8s=$$($(GO) list -m -f '{{.Version}}' k8s.io/kubernetes); \
	major=$${k8s%%.*}; minor=$${k8s#*.}; \
	echo "kube-bins: kube-apiserver and kubectl $$k8s into bin/kube/ (the first time: about 6 minutes on 2 cores)"; \
	$(GO) build -trimpath -o $(CURDIR)/bin/kube/ -ldflags "-s -w \
		-X k8s.io/component-base/version.gitVersion=$$k8s \
		-X k8s.io/component-base/version.gitMajor=$${major#v} \
		-X k8s.io/component-base/version.gitMinor=$${minor%%.*}" tool

# helm builds the helm command the chart's tests (test/helm_*_test.go) run
# into bin/helm/, from helm.sh/helm/v3 as test/helm pins it: a module of its
# own, whose go.mod lists it as a tool, so that the main module does not
# depend on Helm and its Kubernetes libraries. Its Kubernetes modules are
# test/kubernetes's, so that what the two builds share compiles once. The
# version and the Kubernetes version it assumes (.Capabilities.KubeVersion)
# are set as Helm's own Makefile sets them. A module that cannot be fetched
# through the module proxy skips the build (and the tests skip), and fails
# under CI=true.
HELM := test/helm
helm:
	@set -e; cd $(HELM); \
	if ! $(GO) list -deps tool >/dev/null; then \
		$(call cannot_fetch,$(HELM)); \
		exit 0; \
	fi; \
	helm=$$($(GO) list -m -f '{{.Version}}' helm.sh/helm/v3); \
	k8s=$$($(GO) list -m -f '{{.Version}}' k8s.io/client-go); \
	minor=$${k8s#v0.}; minor=$${minor%%.*}; \
	echo "helm: helm $$helm (Kubernetes 1.$$minor) into bin/helm/"; \
	$(GO) build -trimpath -o $(CURDIR)/bin/helm/ -ldflags "-s -w \
		-X helm.sh/helm/v3/internal/version.version=$$helm \
		-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 \
		-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$$minor \
		-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 \
		-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$$minor" tool

# etcd-bins builds the etcd servers of the releases the README supports
# besides Debian's 3.4 (test/etcd_release_test.go) into bin/etcd/: etcd-3.5
# and etcd-3.6, each etcdmain.Main of go.etcd.io/etcd/server/v3 as a module
# of its own under test/etcd/ pins it, so that the main module never depends
# on an older etcd. The first time about 3 minutes each on 2 busy cores (5.5
# in all, 185 s and 144 s measured; they share little with the main module:
# older gRPC and OpenTelemetry); later seconds. A module that cannot be
# fetched through the module proxy skips its build (and its test skips), and
# fails under CI=true.
ETCD_RELEASES := 3.5 3.6
# ETCDUTL_RELEASE's etcdutl (a tool of its module) goes beside its server,
# bin/etcd/etcdutl-3.6: the bundled etcd's restore (docs/bundled-etcd.md,
# test/helm_etcd_restore_test.go), about 20 CPU-seconds more.
ETCDUTL_RELEASE := 3.6
etcd-bins:
	@set -e; for r in $(ETCD_RELEASES); do \
		m=test/etcd/v$$r; \
		if ! (cd $$m && $(GO) list -deps . >/dev/null); then \
			$(call cannot_fetch,$$m); \
			continue; \
		fi; \
		echo "etcd-bins: etcd $$(cd $$m && $(GO) list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3) into bin/etcd/etcd-$$r"; \
		(cd $$m && $(GO) build -trimpath -ldflags "-s -w" -o $(CURDIR)/bin/etcd/etcd-$$r .); \
		if [ $$r = $(ETCDUTL_RELEASE) ]; then \
			(cd $$m && $(GO) build -trimpath -ldflags "-s -w" -o $(CURDIR)/bin/etcd/etcdutl-$$r go.etcd.io/etcd/etcdutl/v3); \
		fi; \
	done

# acme-bins builds the programs the certificate test (test/acme_test.go)
# runs into bin/acme/: Pebble, a test ACME CA, and acmeclient, which obtains
# a certificate with lego and writes its DNS-01 challenges with lego's or
# cert-manager's RFC 2136 code; Pebble's test certificates go beside them
# (bin/acme/certs/: its HTTPS certificate and key, and the root that signs
# them). test/acme pins them: a module of its own, so that the main module
# does not depend on them. One go build: the first time about 85 modules to
# download and 900 packages, 125 CPU-seconds, about a minute on 2 idle cores;
# later seconds. The version goes into Pebble's -version (acmeclient has
# none). A module that cannot be fetched through the module proxy skips the
# build (and the test skips), and fails under CI=true.
ACME := test/acme
acme-bins:
	@set -e; cd $(ACME); \
	if ! $(GO) list -deps tool ./cmd/acmeclient >/dev/null; then \
		$(call cannot_fetch,$(ACME)); \
		exit 0; \
	fi; \
	pebble=$$($(GO) list -m -f '{{.Version}}' github.com/letsencrypt/pebble/v2); \
	echo "acme-bins: pebble $$pebble and acmeclient (lego $$($(GO) list -m -f '{{.Version}}' github.com/go-acme/lego/v5), cert-manager $$($(GO) list -m -f '{{.Version}}' github.com/cert-manager/cert-manager)) into bin/acme/"; \
	$(GO) build -trimpath -o $(CURDIR)/bin/acme/ -ldflags "-s -w -X main.version=$$pebble" tool ./cmd/acmeclient; \
	certs=$$($(GO) list -m -f '{{.Dir}}' github.com/letsencrypt/pebble/v2)/test/certs; \
	install -D -m 0644 $$certs/pebble.minica.pem $(CURDIR)/bin/acme/certs/pebble.minica.pem; \
	install -D -m 0644 $$certs/localhost/cert.pem $(CURDIR)/bin/acme/certs/localhost/cert.pem; \
	install -D -m 0644 $$certs/localhost/key.pem $(CURDIR)/bin/acme/certs/localhost/key.pem

# cannot_fetch is what a target does, in its shell, when it cannot fetch the
# modules of the module $(1) through the module proxy: it fails under
# CI=true, and otherwise says that it skips $(1).
cannot_fetch = case "$$CI" in 1|t|T|true|TRUE|True) \
		echo "$@: $(1): cannot fetch its modules (CI=true: failing)" >&2; exit 1 ;; \
	esac; \
	echo "$@: SKIP $(1): cannot fetch its modules through $$($(GO) env GOPROXY)"

# lint runs gofmt -l (it fails when gofmt lists a file: run gofmt -w on
# it), go vet, staticcheck and actionlint on the GitHub workflows (with
# shellcheck on their run steps when it is installed: Debian package
# shellcheck), both fetched at a pinned version through the Go module proxy
# (go run pkg@version: it does not touch go.mod).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
ACTIONLINT ?= github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
GOFMT ?= gofmt
lint:
	@unformatted=$$($(GOFMT) -l .); if [ -n "$$unformatted" ]; then echo "gofmt -l lists files not formatted by gofmt:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) run $(ACTIONLINT) .github/workflows/*.yml

# fuzz fuzzes the rewrite (FuzzRewrite: arbitrary replies from the backend
# through ServeDNS with random configurations), the UPDATE parser
# (FuzzParseUpdate: arbitrary messages, what it accepts applied to stored
# records), the zone signer (FuzzSigner: changes of odd names, empty
# non-terminals, wildcards and delegations, checked against signing from
# scratch), the parsers of what globaladdr's sources learn (FuzzEchoBody:
# HTTPS echo bodies; FuzzBindingResponse: STUN responses; FuzzPrefixValue:
# written IPv6 prefixes), and the router's PCP and NAT-PMP answer parsers
# (FuzzParsePCP, FuzzParseNATPMP: arbitrary answers) for FUZZTIME each. A
# failing input is written to the package's
# testdata/fuzz/, where it then runs with every go test.
# FUZZTIME is a duration or a count of runs (20000x).
FUZZTIME ?= 10m
# FUZZTIME_SIGNER is FuzzSigner's: each of its runs signs a zone twice, about
# a hundred times as long as another target's run.
FUZZTIME_SIGNER ?= $(FUZZTIME)
# FUZZFLAGS are more flags of each fuzz run (-parallel=1: one worker).
FUZZFLAGS ?=
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzRewrite$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./plugin/globaladdr/
	$(GO) test -run '^$$' -fuzz '^FuzzParseUpdate$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./plugin/etcdzone/update/
	$(GO) test -run '^$$' -fuzz '^FuzzSigner$$' -fuzztime $(FUZZTIME_SIGNER) $(FUZZFLAGS) ./plugin/etcdzone/signer/
	$(GO) test -run '^$$' -fuzz '^FuzzEchoBody$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./plugin/globaladdr/source/probe/
	$(GO) test -run '^$$' -fuzz '^FuzzBindingResponse$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./plugin/globaladdr/source/probe/
	$(GO) test -run '^$$' -fuzz '^FuzzPrefixValue$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./plugin/globaladdr/source/
	$(GO) test -run '^$$' -fuzz '^FuzzParsePCP$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./plugin/globaladdr/source/probe/router/
	$(GO) test -run '^$$' -fuzz '^FuzzParseNATPMP$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./plugin/globaladdr/source/probe/router/

# image builds $(IMAGE):$(VERSION) and $(IMAGE):latest on $(BASE), with
# docker when an engine answers, else with buildah (ENGINE=docker or
# ENGINE=buildah chooses). Without PLATFORMS it is an image for the host, of
# ./coredns. With PLATFORMS (linux/amd64,linux/arm64,linux/arm/v7) it is one
# multi-platform image, a manifest list, of the binaries cross-compiled into
# bin/: buildah builds each platform's image into the list (bud --platform
# ... --manifest); docker buildx builds them all and, as BUILDX_FLAGS says,
# loads the list into the engine (which needs docker's containerd image
# store) or pushes it (BUILDX_FLAGS=--push, IMAGE naming a repository).
# Nothing runs in the build, so nothing is emulated.
#
# The build context is a temporary directory with a copy of each platform's
# binary as PLATFORM/coredns (linux/arm/v7/coredns), carrying the
# cap_net_bind_service file capability, set by setcap (root, Debian package
# libcap2-bin); the Dockerfile copies TARGETPLATFORM's, which the engines set
# for each platform they build and make sets for the host's. No build stage,
# so `make image BASE=scratch` needs no registry. The binaries are left as
# they are.
BUILDX_FLAGS ?= --load
image: $(if $(PLATFORMS),$(call platform_bins,$(PLATFORMS)),build)
	@set -e; ctx=$$(mktemp -d); trap 'rm -rf "$$ctx"' EXIT; \
	$(if $(PLATFORMS),$(foreach p,$(call platforms,$(PLATFORMS)),$(call context_binary,$(call platform_bin,$(p)),$(p));), \
		host=$$($(GO) env GOOS)/$$($(GO) env GOARCH); $(call context_binary,$(BINARY),$$host);) \
	engine='$(ENGINE)'; \
	if [ -z "$$engine" ]; then \
		if docker info >/dev/null 2>&1; then engine=docker; else engine=buildah; fi; \
	fi; \
	echo "image: $$engine: $(IMAGE):$(VERSION) for $(or $(PLATFORMS),$$host) on $(BASE)"; \
	case "$$engine$(if $(PLATFORMS),/platforms)" in \
	docker) docker build --build-arg BASE='$(BASE)' --build-arg TARGETPLATFORM="$$host" \
		-t '$(IMAGE):$(VERSION)' -t '$(IMAGE):latest' -f Dockerfile "$$ctx" ;; \
	buildah) buildah bud --isolation chroot --build-arg BASE='$(BASE)' --build-arg TARGETPLATFORM="$$host" \
		-t '$(IMAGE):$(VERSION)' -t '$(IMAGE):latest' -f Dockerfile "$$ctx" ;; \
	docker/platforms) docker buildx build --platform '$(PLATFORMS)' --build-arg BASE='$(BASE)' \
		-t '$(IMAGE):$(VERSION)' -t '$(IMAGE):latest' $(BUILDX_FLAGS) -f Dockerfile "$$ctx" ;; \
	buildah/platforms) for ref in '$(IMAGE):$(VERSION)' '$(IMAGE):latest'; do \
			buildah manifest rm "$$ref" >/dev/null 2>&1 || buildah rmi "$$ref" >/dev/null 2>&1 || true; \
		done; \
		buildah bud --isolation chroot --platform '$(PLATFORMS)' --build-arg BASE='$(BASE)' \
			--manifest '$(IMAGE):$(VERSION)' -f Dockerfile "$$ctx"; \
		buildah tag '$(IMAGE):$(VERSION)' '$(IMAGE):latest' ;; \
	*) echo "image: ENGINE is docker or buildah, not $$engine" >&2; exit 1 ;; \
	esac

# context_binary is the shell command that copies the binary $(1) into the
# build context $$ctx as the platform $(2)'s, with the file capability.
context_binary = install -D -m 0755 $(1) "$$ctx/$(2)/coredns"; \
	setcap cap_net_bind_service=+ep "$$ctx/$(2)/coredns" || \
		{ echo "image: setcap failed: it needs root and libcap2-bin" >&2; exit 1; }

# dist builds a release's files into dist/, named after DIST_VERSION, the
# version without its leading v (0.1.0 for the tag v0.1.0): the binaries of
# TEST_PLATFORMS (coredns-0.1.0-linux-armv7), the multi-platform image as
# an OCI archive with an index (globaladdr-0.1.0.oci.tar, tagged 0.1.0), the
# chart as helm package names it (globaladdr-0.1.0.tgz, version and
# appVersion 0.1.0), a CycloneDX SBOM of the modules linked into coredns
# (globaladdr-0.1.0.sbom.cdx.json: cyclonedx-gomod, fetched at a pinned
# version as lint's staticcheck, reads them from the linux/amd64 binary's
# build information, which the other platforms' share) and SHA256SUMS of
# them all. The image is make image's with buildah, on $(BASE) (make test
# builds it on scratch: no registry), its manifest list named
# $(DIST_IMAGE)-PID:DIST_VERSION (the PID: builds of two checkouts on one
# machine share buildah's store), removed with its images once in the
# archive. make test builds it on scratch; a release, on distroless, is the
# same files on another base, which no test here pulls. A tagged VERSION
# (v0.1.0, v0.1.0-3-gabc1234) must be the VERSION file's release: dist
# refuses a tag that was not bumped there.
# It needs root (setcap), buildah and bin/helm (make helm). The cross builds
# are the costly part: about 170 CPU-seconds for each platform other than
# the host's the first time; the SBOM tool builds in about 40 seconds and
# reads the binary in a second.
DIST_VERSION := $(patsubst v%,%,$(VERSION))
DIST_IMAGE   ?= localhost/globaladdr-dist
CYCLONEDX    ?= github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0
dist: $(call platform_bins,$(TEST_PLATFORMS)) chart-files helm
	@set -e; v='$(DIST_VERSION)'; img='$(DIST_IMAGE)'-$$$$; \
	case '$(VERSION)' in v*) [ "$${v%%-*}" = "$$(cat VERSION)" ] || \
		{ echo "dist: the tag says $${v%%-*}, the VERSION file $$(cat VERSION): bump VERSION, Chart.yaml and the docs (CONTRIBUTING.md, Releasing)" >&2; exit 1; } ;; esac; \
	rm -rf dist; mkdir -p dist; \
	$(foreach p,$(call platforms,$(TEST_PLATFORMS)),install -m 0755 $(call platform_bin,$(p)) "dist/coredns-$$v-$(subst /,-,$(subst arm/v,armv,$(p)))";) \
	$(MAKE) --no-print-directory image ENGINE=buildah PLATFORMS='$(TEST_PLATFORMS)' IMAGE="$$img" VERSION="$$v" BASE='$(BASE)' \
		$(foreach p,$(call platforms,$(TEST_PLATFORMS)),-o $(call platform_bin,$(p))); \
	buildah manifest push --quiet --all "$$img:$$v" "oci-archive:dist/globaladdr-$$v.oci.tar:$$v"; \
	images=$$(for d in $$(buildah manifest inspect "$$img:$$v" | sed -n 's/.*"digest": *"\(sha256:[0-9a-f]*\)".*/\1/p'); do \
		echo "$$(buildah inspect --type image --format '{{.FromImageID}}' "$$img:$$v@$$d")"; done); \
	buildah manifest rm "$$img:$$v" "$$img:latest" >/dev/null; buildah rmi $$images >/dev/null; \
	bin/helm/helm package charts/globaladdr --version "$$v" --app-version "$$v" --destination dist >/dev/null; \
	$(GO) run $(CYCLONEDX) bin -json -std -version "v$$v" -output "dist/globaladdr-$$v.sbom.cdx.json" $(call platform_bin,linux/amd64); \
	cd dist && sha256sum -- * > SHA256SUMS; \
	echo "dist: $$v:"; ls -l

# push pushes dist/'s image, every platform of its index, to
# $(REGISTRY)/globaladdr:DIST_VERSION with skopeo (Debian package skopeo),
# and its chart to oci://$(REGISTRY)/charts with helm: users install it as
# oci://$(REGISTRY)/charts/globaladdr. With REGISTRY_USER in the
# environment both log in to REGISTRY's host first, as that user with
# REGISTRY_PASSWORD (passed on standard input, kept in a temporary file
# removed afterwards); without it, they push anonymously. PLAIN_HTTP=1
# pushes over plain HTTP (a local test registry). The references are in
# lower case, as registries take them (a GitHub owner may have capitals).
REGISTRY ?= ghcr.io/globaladdr
registry = $(shell printf '%s' '$(REGISTRY)' | tr A-Z a-z)
PLAIN_HTTP ?=
registry_host = $(firstword $(subst /, ,$(registry)))
push:
	@set -e; v='$(DIST_VERSION)'; \
	for f in globaladdr-$$v.oci.tar globaladdr-$$v.tgz; do \
		[ -f "dist/$$f" ] || { echo "push: no dist/$$f: run make dist first" >&2; exit 1; }; \
	done; \
	auth=$$(mktemp -d); trap 'rm -rf "$$auth"' EXIT; \
	if [ -n "$$REGISTRY_USER" ]; then \
		printf '%s\n' "$$REGISTRY_PASSWORD" | skopeo login --authfile "$$auth/auth.json" $(if $(PLAIN_HTTP),--tls-verify=false) \
			--username "$$REGISTRY_USER" --password-stdin '$(registry_host)'; \
		printf '%s\n' "$$REGISTRY_PASSWORD" | bin/helm/helm registry login --registry-config "$$auth/helm.json" $(if $(PLAIN_HTTP),--plain-http) \
			--username "$$REGISTRY_USER" --password-stdin '$(registry_host)'; \
	fi; \
	echo "push: $(registry)/globaladdr:$$v"; \
	skopeo copy --quiet --all $$([ -f "$$auth/auth.json" ] && echo --dest-authfile "$$auth/auth.json") $(if $(PLAIN_HTTP),--dest-tls-verify=false) \
		"oci-archive:dist/globaladdr-$$v.oci.tar:$$v" 'docker://$(registry)/globaladdr':"$$v"; \
	echo "push: oci://$(registry)/charts/globaladdr $$v"; \
	bin/helm/helm push --registry-config "$$auth/helm.json" $(if $(PLAIN_HTTP),--plain-http) \
		"dist/globaladdr-$$v.tgz" 'oci://$(registry)/charts'

# bench compares the throughput of server blocks with and without globaladdr
# under dnsperf (see BENCHMARKS.md); BENCH_FLAGS passes flags to ./bench,
# e.g. BENCH_FLAGS='-rounds 9 -duration 10s'.
bench: build
	$(GO) run ./bench -coredns ./$(BINARY) $(BENCH_FLAGS)

# soak runs dnsperf with mixed names and types against the external view for
# SOAK and fails when a query is lost, when the RSS of coredns does not stay
# flat within 10% or when its goroutines grow.
SOAK ?= 10m
soak: build
	$(GO) run ./bench -coredns ./$(BINARY) -soak $(SOAK) $(BENCH_FLAGS)

clean:
	rm -f $(BINARY)
	rm -rf bin
