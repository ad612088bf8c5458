package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// IperfOptions bound one iperf3 TCP run.
type IperfOptions struct {
	Duration time.Duration // default 3s
	Parallel int           // streams, default 1
	Reverse  bool          // server sends
}

// IperfResult is the summary of one run.
type IperfResult struct {
	BitsPerSecond float64 // received by the receiving side
	Retransmits   int
	Duration      time.Duration
}

type iperfJSON struct {
	Error string `json:"error"`
	End   struct {
		SumSent struct {
			Seconds       float64 `json:"seconds"`
			BitsPerSecond float64 `json:"bits_per_second"`
			Retransmits   int     `json:"retransmits"`
		} `json:"sum_sent"`
		SumReceived struct {
			Seconds       float64 `json:"seconds"`
			BitsPerSecond float64 `json:"bits_per_second"`
		} `json:"sum_received"`
	} `json:"end"`
}

// Iperf3 runs a one-off iperf3 server bound to addr in server and a client in client, both bounded in time,
// and parses the client's JSON report.
func Iperf3(ctx context.Context, server, client *Netns, addr netip.Addr, o IperfOptions) (IperfResult, error) {
	if o.Duration == 0 {
		o.Duration = 3 * time.Second
	}
	if o.Parallel == 0 {
		o.Parallel = 1
	}
	port := 20000 + rand.IntN(20000)
	ctx, cancel := context.WithTimeout(ctx, o.Duration+20*time.Second)
	defer cancel()
	srv, err := server.Start(ctx, "iperf3", "-s", "-1", "-B", addr.String(), "-p", strconv.Itoa(port))
	if err != nil {
		return IperfResult{}, err
	}
	defer srv.Kill()
	err = WaitFor(ctx, 5*time.Second, 10*time.Millisecond, func() (bool, error) {
		select {
		case <-srv.Done():
			return false, Permanent(fmt.Errorf("iperf3 server exited: %s", srv.Output()))
		default:
		}
		return server.TCPListening(port)
	})
	if err != nil {
		return IperfResult{}, fmt.Errorf("iperf3 server on %s:%d in %s: %w", addr, port, server.Logical, err)
	}
	args := []string{"-c", addr.String(), "-p", strconv.Itoa(port), "-J", "--connect-timeout", "3000",
		"-t", strconv.FormatFloat(o.Duration.Seconds(), 'f', 1, 64), "-P", strconv.Itoa(o.Parallel)}
	if o.Reverse {
		args = append(args, "-R")
	}
	out, runErr := client.Output(ctx, "iperf3", args...)
	var j iperfJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		if runErr != nil {
			return IperfResult{}, runErr
		}
		return IperfResult{}, fmt.Errorf("parse iperf3 json: %w", err)
	}
	if j.Error != "" {
		return IperfResult{}, fmt.Errorf("iperf3 client in %s: %s", client.Logical, j.Error)
	}
	if runErr != nil {
		return IperfResult{}, runErr
	}
	res := IperfResult{
		BitsPerSecond: j.End.SumReceived.BitsPerSecond,
		Retransmits:   j.End.SumSent.Retransmits,
		Duration:      time.Duration(j.End.SumReceived.Seconds * float64(time.Second)),
	}
	if res.BitsPerSecond == 0 {
		return res, errors.New("iperf3 reported 0 bit/s")
	}
	return res, nil
}

// TCPListening reports whether a TCP socket listens on port (any address, v4 or v6) in the namespace.
func (n *Netns) TCPListening(port int) (bool, error) {
	want := fmt.Sprintf(":%04X ", port)
	for _, f := range []string{"tcp", "tcp6"} {
		s, err := n.ReadProcNet(f)
		if err != nil {
			return false, err
		}
		for _, line := range strings.Split(s, "\n")[1:] {
			fields := strings.Fields(line)
			// local_address is field 1, st is field 3; 0A = LISTEN.
			if len(fields) > 3 && strings.HasSuffix(fields[1]+" ", want) && fields[3] == "0A" {
				return true, nil
			}
		}
	}
	return false, nil
}
