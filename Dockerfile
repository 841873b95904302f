# A small static knee image for the runner and coordinator pods (knee k8s job).
#   docker build -t registry.example/knee:v1 . && docker push registry.example/knee:v1
# knee is pure Go: built without cgo it needs no libc, so the image holds the
# binary, CA certificates for https targets, and a non-root user (65532, the
# uid the manifests run as). Without network, see `make image` (from the
# binary of `make build`) or the OFFLINE builds below.
#
# The build image is pinned by digest: a tag moves, a digest does not. Its Go
# must be at least go.mod's `go` line (the official image sets
# GOTOOLCHAIN=local). To move it, look the digest up and replace both:
#   docker buildx imagetools inspect golang:1.26.8 --format '{{.Manifest.Digest}}'
# (k8s/TestDockerfilePinned checks the pin's form and the version.) scratch is
# not an image but the empty file system: there is nothing to pin.
#
# Offline, with the modules already on this machine (no module proxy reached):
#   go mod vendor && docker build --build-arg OFFLINE=vendor -t knee .
#   GOMODCACHE=$PWD/.modcache go mod download && docker build --build-arg OFFLINE=modcache -t knee .
# The base image must then be in the local image store already (docker pull,
# or docker load of a saved one).
ARG GO_IMAGE=golang:1.26.8@sha256:6c2a5538f964f1c82f97ad14988bf05de100d922d159d0e398b54c7b0ca0c6c9
FROM ${GO_IMAGE} AS build
ARG OFFLINE=
WORKDIR /src
COPY go.mod go.sum ./
RUN [ -n "$OFFLINE" ] || go mod download
COPY . .
RUN case "$OFFLINE" in \
      "") ;; \
      vendor) export GOFLAGS=-mod=vendor GOPROXY=off ;; \
      modcache) export GOFLAGS=-mod=mod GOPROXY=off GOMODCACHE=/src/.modcache ;; \
      *) echo "OFFLINE=$OFFLINE: use vendor or modcache" >&2; exit 2 ;; \
    esac \
 && CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags='-s -w -buildid=' -o /out/knee ./cmd/knee \
 && mkdir -p /out/tmp && chmod 1777 /out/tmp

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/
COPY --from=build /out/knee /knee
COPY --from=build /out/tmp /tmp
USER 65532:65532
WORKDIR /results
ENTRYPOINT ["/knee"]
