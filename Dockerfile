# watchdogd's image: the static binary `make build` made, a CA bundle, a
# passwd entry for uid 65532, and nothing else (no shell, no package
# manager, no base image to pull). Time zones are embedded in the binary
# (time/tzdata).
#
# Its build context is laid out by hack/image-context.sh, not the
# repository: build it with
#
#   make image                 # podman (or ENGINE=docker where `docker info` works)
#   make test-image            # and run it: version, check-config, readiness, TLS, SIGTERM
#
# The release workflow builds the same stage for linux/amd64 and
# linux/arm64 with docker buildx, one binary per architecture.
FROM scratch
ARG TARGETARCH
ARG VERSION=dev
ARG REVISION=unknown
ARG SOURCE=https://github.com/watchdogd/watchdogd
LABEL org.opencontainers.image.title="watchdogd" \
      org.opencontainers.image.description="Keeps kandev's AI-agent sessions from silently rotting" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}"
COPY rootfs/ /
COPY linux-${TARGETARCH}/watchdogd /usr/local/bin/watchdogd
USER 65532:65532
# Where the chart mounts the config: every command run in the container
# (kubectl exec … watchdogd episodes list) finds it without --config.
ENV WATCHDOGD_CONFIG=/etc/watchdogd/config/watchdogd.yaml
EXPOSE 9464
ENTRYPOINT ["/usr/local/bin/watchdogd"]
CMD ["run", "--config", "/etc/watchdogd/config/watchdogd.yaml"]
