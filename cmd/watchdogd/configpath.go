package main

import (
	"errors"
	"io/fs"
	"os"
)

// imageConfig is where the image and the chart keep the config; a
// command run there (kubectl exec … watchdogd episodes list) finds it
// without --config.
const imageConfig = "/etc/watchdogd/config/watchdogd.yaml"

// findConfig is the config file of a command given no --config:
// $WATCHDOGD_CONFIG (the image and the chart set it), else imageConfig
// where it exists, else none: the built-in defaults, as the daemon runs
// with no file. A $WATCHDOGD_CONFIG naming a missing file is that file:
// loading it says so, rather than the defaults hiding the mistake.
func findConfig(getenv func(string) string, exists func(string) bool) string {
	if v := getenv("WATCHDOGD_CONFIG"); v != "" {
		return v
	}
	if exists(imageConfig) {
		return imageConfig
	}
	return ""
}

// fileExists reports whether path is there (a file or a link to one):
// one that cannot be stat'ed for another reason (permissions) counts, so
// that loading it says why.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}
