# The globaladdr build of CoreDNS, a drop-in for the coredns/coredns image.
#
# Build it with `make image` (add BASE=scratch to build offline, and
# PLATFORMS=linux/amd64,linux/arm64,linux/arm/v7 for one multi-platform
# image). The image holds only a static coredns that make built (./coredns
# for the host, or the one Go cross-compiled for the platform); nothing is
# compiled or run here, so no platform needs emulation. The build context
# holds each platform's binary as PLATFORM/coredns: TARGETPLATFORM, which
# buildah and docker buildx set for each platform they build (and make
# image sets for the host's), picks it.
# The binary must carry the cap_net_bind_service file capability, so that
# user 65532 can listen on port 53: `make image` sets it with setcap on its
# copy of the binary in the build context, and COPY keeps the
# security.capability extended attribute (test/image_test.go checks it in the
# image). A COPY can't add it, and a build stage that runs setcap would need
# an image from a registry even when BASE=scratch.
ARG BASE=gcr.io/distroless/static-debian12:nonroot
FROM ${BASE}
ARG TARGETPLATFORM
COPY ${TARGETPLATFORM}/coredns /coredns
USER 65532:65532
# The repository ghcr.io links the published package to.
LABEL org.opencontainers.image.source=https://github.com/globaladdr/globaladdr
EXPOSE 53 53/udp
ENTRYPOINT ["/coredns"]
