#!/bin/sh
# build.sh OUT builds external-dns, the release test/externaldns/latest pins,
# into the file OUT, for the tests that run it (make externaldns-bin). The
# module proxy does not serve all that release requires (Civo's and
# Exoscale's API clients, the OpenShift API it pins), so it is built from a
# copy of its module source in which:
#
#   - the providers of REMOVED are gone from the provider registry, and the
#     DynamoDB registry with them (it is built on the aws provider). What
#     remains is what the tests run: coredns (and its alias skydns), webhook,
#     rfc2136, pdns and inmemory. Fewer providers, fewer cloud SDKs to
#     compile: the release needs Go 1.27, which shares no build cache with
#     the Go that builds the rest;
#   - go.mod requires neither Civo's nor Exoscale's client, and takes
#     github.com/openshift/api at the version its github.com/openshift/client-go
#     was built against, which the proxy serves (its go.sum lines are
#     openshift-api.sum, beside this script).
#
# Sources, registries other than DynamoDB, and flags are the release's. The
# version goes into --version as the release's own build sets it. Run it
# with GOTOOLCHAIN naming the Go the release needs (the Makefile does).
set -eu

out=$1
here=$(cd "$(dirname "$0")" && pwd)
REMOVED="alibabacloud aws awssd azure civo cloudflare dnsimple exoscale godaddy google linode ns1 oci ovh pihole scaleway"
OPENSHIFT_API=github.com/openshift/api@v0.0.0-20260810132456-8f52beb625b5

version=$(cd "$here/../latest" && go list -m -f '{{.Version}}' sigs.k8s.io/external-dns)
src=$(go mod download -json "sigs.k8s.io/external-dns@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "build.sh: no module source of external-dns $version" >&2; exit 1; }

# The copy is a temporary directory, made anew each time, so that a build is
# the same whatever an earlier one left (and gofmt -l . never sees it); the
# build cache, which -trimpath keys by content, makes a second build quick.
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -R "$src/." "$work"
chmod -R u+w "$work"
cd "$work"

for p in $REMOVED; do
	rm -r "provider/$p"
	sed -i -e "\|\"sigs.k8s.io/external-dns/provider/$p\"|d" -e "/[[:space:]]$p\.New/d" provider/factory/provider.go
done
rm -r registry/dynamodb
sed -i -e '\|"sigs.k8s.io/external-dns/registry/dynamodb"|d' -e '/[[:space:]]dynamodb\.New/d' registry/factory/registry.go
if grep -rqE "\"sigs.k8s.io/external-dns/(registry/dynamodb|provider/($(echo $REMOVED | tr ' ' '|')))\"" --include='*.go' --exclude='*_test.go' .; then
	echo "build.sh: external-dns $version still imports a removed provider:" >&2
	grep -rlE "\"sigs.k8s.io/external-dns/(registry/dynamodb|provider/($(echo $REMOVED | tr ' ' '|')))\"" --include='*.go' --exclude='*_test.go' . >&2
	exit 1
fi

go mod edit -droprequire=github.com/civo/civogo -droprequire=github.com/exoscale/egoscale/v3 \
	-replace=github.com/openshift/api=$OPENSHIFT_API
cat "$here/openshift-api.sum" >>go.sum

echo "external-dns-bin: external-dns $version (providers coredns, webhook, rfc2136, pdns, inmemory) into $out"
go build -trimpath -o "$out" -ldflags "-s -w -X sigs.k8s.io/external-dns/pkg/apis/externaldns.Version=$version" .
