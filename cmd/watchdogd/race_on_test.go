//go:build race

package main

// raceBuild: the test binary runs under the race detector, so the watchdogd
// binary the tests run is built with it too, and a data race in the daemon
// fails the tests that see its exit status or its stderr.
const raceBuild = true
