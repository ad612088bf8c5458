// SPDX-License-Identifier: GPL-2.0-only
//go:build ignore

/*
 * A packet generator and a packet counter for benchmarks, never part of the
 * router.
 *
 * xdp_gen runs under BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES on a
 * veth: every run rewrites the frame's headers from gen.hdr (the pages are
 * recycled, and the router or the kernel rewrote MACs and TTL of the last
 * frame in them), gives it the next of gen.flows UDP source ports and returns
 * XDP_TX, which the test run turns into a transmit out of that veth to its
 * peer. Ports change only the UDP header, whose checksum is zero (none), so
 * the IPv4 checksum in gen.hdr holds for every flow.
 *
 * xdp_count, attached to the receiving veth, counts the generated frames per
 * flow (source address, destination address and port, source port in range)
 * and drops them; anything else goes to the kernel.
 *
 * xdp_pass does nothing: attached to a veth it makes the veth run NAPI, without
 * which the veth refuses the XDP frames its peer transmits.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "GPL";

#define MAX_FLOWS 256
#define HDR_LEN 42 /* Ethernet 14 + IPv4 20 + UDP 8 */
#define SPORT_OFF (ETH_HLEN + 20)

/* Ethernet + IPv4 + UDP header as five words and a tail, so it is copied in
 * six stores. */
struct frame_hdr {
	__u64 w[5];
	__u16 tail;
};

struct gen_config {
	struct frame_hdr hdr;
	__u16 base_port; /* host order */
	__u16 flows;     /* 1..MAX_FLOWS */
};

struct count_config {
	__be32 saddr;
	__be32 daddr;
	__be16 dport;
	__u16 base_port; /* host order */
	__u16 flows;
};

/* Set by the loader before loading. */
volatile const struct gen_config gen = {};
volatile const struct count_config want = {};

/* Frames xdp_gen produced, per CPU: also the sequence that picks the port. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} generated SEC(".maps");

/* Frames xdp_count dropped, per CPU and flow (source port - base_port). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_FLOWS);
	__type(key, __u32);
	__type(value, __u64);
} received SEC(".maps");

SEC("xdp")
int xdp_gen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 *w = data;
	__u32 zero = 0;
	__u64 *seq;
	__u16 flows = gen.flows;

	if (data + HDR_LEN > data_end || flows == 0)
		return XDP_ABORTED;
	seq = bpf_map_lookup_elem(&generated, &zero);
	if (!seq)
		return XDP_ABORTED;
	w[0] = gen.hdr.w[0];
	w[1] = gen.hdr.w[1];
	w[2] = gen.hdr.w[2];
	w[3] = gen.hdr.w[3];
	w[4] = gen.hdr.w[4];
	*(__u16 *)(data + 40) = gen.hdr.tail;
	*(__u16 *)(data + SPORT_OFF) = bpf_htons(gen.base_port + (__u16)(*seq % flows));
	*seq += 1;
	return XDP_TX;
}

/* Counts a generated frame (and says so), or leaves anything else alone. */
static __always_inline int count_frame(void *data, void *data_end)
{
	struct ethhdr *eth = data;
	struct iphdr *iph = data + ETH_HLEN;
	__be16 *ports = data + SPORT_OFF; /* source, destination */
	__u32 flow;
	__u64 *n;

	if ((void *)(ports + 2) > data_end)
		return 0;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || iph->ihl != 5 || iph->protocol != IPPROTO_UDP ||
	    iph->saddr != want.saddr || iph->daddr != want.daddr || ports[1] != want.dport)
		return 0;
	flow = (__u16)(bpf_ntohs(ports[0]) - want.base_port);
	if (flow >= want.flows)
		return 0;
	n = bpf_map_lookup_elem(&received, &flow);
	if (!n)
		return 0;
	*n += 1;
	return 1;
}

SEC("xdp")
int xdp_count(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	return count_frame(data, data_end) ? XDP_DROP : XDP_PASS;
}

/* The same count at tc ingress: for frames that reach the receiving veth
 * without passing its XDP hook (bpf_redirect_peer hands the skb to the
 * veth's receive path directly). */
SEC("tc")
int tc_count(struct __sk_buff *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	return count_frame(data, data_end) ? TC_ACT_SHOT : TC_ACT_OK;
}

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}
