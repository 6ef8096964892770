#!/usr/bin/env bash
# image-context.sh DIR BINARY:ARCH…: lays out the build context the
# Dockerfile's one stage copies from, with nothing to compile and nothing to
# pull. `make image` gives it the binary `make build` made; the release
# workflow one static binary per architecture.
#
#   DIR/rootfs/etc/passwd, etc/group          uid and gid 65532 (nonroot), as distroless names them
#   DIR/rootfs/etc/ssl/certs/ca-certificates.crt   this machine's CA bundle (Debian's ca-certificates)
#   DIR/rootfs/tmp/                           an empty /tmp (1777) for `watchdogd demo`'s scratch files
#   DIR/linux-ARCH/watchdogd                  the static binary for each architecture
#
# Time zones need no files: the binary embeds Go's time/tzdata.
set -euo pipefail
dir=$1
shift
bundle=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
[ -s "$bundle" ] || { echo "image-context: no CA bundle at $bundle (install Debian's ca-certificates)" >&2; exit 1; }
[ $# -gt 0 ] || { echo "usage: image-context.sh DIR BINARY:ARCH…" >&2; exit 2; }
rm -rf "$dir"
mkdir -p "$dir/rootfs/etc/ssl/certs" "$dir/rootfs/tmp"
chmod 1777 "$dir/rootfs/tmp"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$dir/rootfs/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' > "$dir/rootfs/etc/group"
install -m 0644 "$bundle" "$dir/rootfs/etc/ssl/certs/ca-certificates.crt"
for b in "$@"; do
  bin=${b%:*} arch=${b##*:}
  if [ "$bin" = "$b" ] || [ -z "$arch" ]; then echo "image-context: $b: want BINARY:ARCH" >&2; exit 2; fi
  install -D -m 0755 "$bin" "$dir/linux-$arch/watchdogd"
done
