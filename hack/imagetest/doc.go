// Package imagetest runs watchdogd's container image as a user would: its
// one test (build tag image) is what `make test-image` runs against the
// image `make image` built, through podman or docker.
package imagetest
