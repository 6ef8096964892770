// Package testport picks the TCP port of a server a test starts on a port
// it must name in advance (a daemon's http.listen, a PostgreSQL's or a
// PgBouncer's port).
//
// A port the kernel hands out for port 0 comes from the ephemeral range,
// which is also where every outgoing connection takes its local port: in a
// busy test run one of them can take the port between the pick and the
// server's bind, and the server fails with "address already in use". So the
// port is picked at random below that range, where nothing is handed out by
// itself, and checked free by binding it once.
package testport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
)

// lowest is the bottom of the range picked from, above the well-known and
// most registered ports.
const lowest = 10000

// Free returns a port on 127.0.0.1 that was free a moment ago, below the
// ephemeral range.
func Free() (int, error) {
	top := ephemeralStart()
	for range 200 {
		port := lowest + rand.IntN(top-lowest)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		if err := l.Close(); err != nil {
			return 0, fmt.Errorf("free port %d: %w", port, err)
		}
		return port, nil
	}
	return 0, errors.New("no free port found below the ephemeral range")
}

// ephemeralStart is the first port of Linux's ephemeral range, or its
// default where it cannot be read.
func ephemeralStart() int {
	var lo, hi int
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		_, err = fmt.Sscan(string(b), &lo, &hi)
	}
	if err != nil || lo <= lowest+1000 {
		return 32768
	}
	return lo
}
