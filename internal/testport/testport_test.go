package testport

import (
	"fmt"
	"net"
	"testing"
)

// TestFree: the port is below the ephemeral range, above lowest, and can be
// bound by the caller.
func TestFree(t *testing.T) {
	top := ephemeralStart()
	for range 20 {
		port, err := Free()
		if err != nil {
			t.Fatal(err)
		}
		if port < lowest || port >= top {
			t.Fatalf("port %d outside [%d, %d)", port, lowest, top)
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Fatalf("port %d: %v", port, err)
		}
		_ = l.Close()
	}
}
