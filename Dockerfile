# A small static knee image for runner and merge pods (knee k8s job).
#   docker build -t registry.example/knee:v1 . && docker push registry.example/knee:v1
# knee is pure Go: built without cgo it needs no libc, so the image holds the
# binary, CA certificates for https targets, and a non-root user (65532, the
# uid the manifests run as).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/knee ./cmd/knee \
 && mkdir -p /out/tmp && chmod 1777 /out/tmp

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/
COPY --from=build /out/knee /knee
COPY --from=build /out/tmp /tmp
USER 65532:65532
WORKDIR /results
ENTRYPOINT ["/knee"]
