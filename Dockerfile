# A static, CGO-free watchdogd on a minimal non-root base.
#   docker build -t watchdogd .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 GOTOOLCHAIN=local go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/watchdogd ./cmd/watchdogd

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/watchdogd /usr/local/bin/watchdogd
USER 65532:65532
EXPOSE 9464
ENTRYPOINT ["/usr/local/bin/watchdogd"]
CMD ["run", "--config", "/etc/watchdogd/config/watchdogd.yaml"]
