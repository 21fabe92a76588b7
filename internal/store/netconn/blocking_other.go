//go:build !linux

package netconn

import (
	"context"
	"net"
	"time"
)

// dialBlocking falls back to the poller where blocking connections are not
// implemented.
func dialBlocking(ctx context.Context, network, addr string, timeout, keepAlive time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout, KeepAlive: keepAlive}
	return d.DialContext(ctx, network, addr)
}
