package main

import (
	"fmt"
	"net"
	"strconv"

	"github.com/chemmy/chemmy/cmd/stack"
)

// metricsAddrs spreads the -metrics-addr address over the processes: the
// gateway on it; table-svc, wallet-svc, shoe-svc and the stack (business
// metrics) on the next four ports.
func metricsAddrs(addr string) (stack.MetricsAddrs, error) {
	if addr == "" {
		return stack.MetricsAddrs{}, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return stack.MetricsAddrs{}, err
	}
	p, err := strconv.Atoi(port)
	if err != nil || p <= 0 || p > 65531 {
		return stack.MetricsAddrs{}, fmt.Errorf("%q: a fixed port is needed (the next four are used too)", addr)
	}
	at := func(i int) string { return net.JoinHostPort(host, strconv.Itoa(p+i)) }
	return stack.MetricsAddrs{Gateway: at(0), Table: at(1), Wallet: at(2), Shoe: at(3), Stack: at(4)}, nil
}
