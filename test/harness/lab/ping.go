package lab

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"time"
)

// PingOptions bound a ping run. ping sends Count requests Interval apart and waits up to Wait for each reply.
// Zero values mean Count 3, Interval 20ms, Wait 1s.
type PingOptions struct {
	Count    int
	Interval time.Duration // >= 2ms (ping's root minimum)
	Wait     time.Duration // per-reply timeout (ping -W)
	// Deadline, when set, makes ping run until Count replies arrived or the deadline passed (ping -w): it then
	// keeps sending past Count while replies are missing. Leave it zero to send exactly Count requests.
	Deadline time.Duration
	Size     int // payload bytes, 0 = ping's default (56)
}

// PingResult is the summary line of ping.
type PingResult struct {
	Transmitted, Received int
	Output                string
}

// Loss is the fraction of echo requests without reply (1 when nothing was sent).
func (r PingResult) Loss() float64 {
	if r.Transmitted == 0 {
		return 1
	}
	return float64(r.Transmitted-r.Received) / float64(r.Transmitted)
}

var pingSummary = regexp.MustCompile(`(\d+) packets transmitted, (\d+) received`)

// Ping runs ping inside the namespace. It returns an error only when ping could not run or printed no summary;
// lost replies show in the result.
func (n *Netns) Ping(ctx context.Context, dst netip.Addr, o PingOptions) (PingResult, error) {
	if o.Count == 0 {
		o.Count = 3
	}
	if o.Interval == 0 {
		o.Interval = 20 * time.Millisecond
	}
	if o.Wait == 0 {
		o.Wait = time.Second
	}
	args := []string{"-n", "-q", "-c", strconv.Itoa(o.Count),
		"-i", strconv.FormatFloat(o.Interval.Seconds(), 'f', 3, 64),
		"-W", strconv.FormatFloat(o.Wait.Seconds(), 'f', 3, 64)}
	bound := time.Duration(o.Count)*o.Interval + o.Wait
	if o.Deadline > 0 {
		args = append(args, "-w", strconv.Itoa(int((o.Deadline+time.Second-1)/time.Second)))
		bound = o.Deadline
	}
	if o.Size > 0 {
		args = append(args, "-s", strconv.Itoa(o.Size))
	}
	if dst.Is6() {
		args = append(args, "-6")
	} else {
		args = append(args, "-4")
	}
	args = append(args, dst.String())
	ctx, cancel := context.WithTimeout(ctx, bound+5*time.Second)
	defer cancel()
	out, err := n.Output(ctx, "ping", args...)
	res := PingResult{Output: out}
	m := pingSummary.FindStringSubmatch(out)
	if m == nil {
		if err == nil {
			err = errors.New("no summary line")
		}
		return res, fmt.Errorf("ping %s from %s: %w", dst, n.Logical, err)
	}
	res.Transmitted, _ = strconv.Atoi(m[1])
	res.Received, _ = strconv.Atoi(m[2])
	return res, nil
}
