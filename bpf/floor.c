// SPDX-License-Identifier: GPL-2.0-only
//go:build ignore

/*
 * Reference programs for benchmarks only (never attached): the cost of
 * BPF_PROG_TEST_RUN itself, and of a bare bpf_fib_lookup, next to which the
 * router's per-packet numbers are read.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tc")
int tc_pass(struct __sk_buff *skb)
{
	return TC_ACT_UNSPEC;
}

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

/* One bpf_fib_lookup of the IPv4 destination in routing table skb->mark (set
 * through the test-run ctx). TC_ACT_UNSPEC on success, TC_ACT_SHOT otherwise. */
SEC("tc")
int tc_fib_only(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct iphdr *iph = data + ETH_HLEN;
	struct bpf_fib_lookup fib = {};

	if ((void *)(iph + 1) > data_end)
		return TC_ACT_SHOT;
	fib.family = 2; /* AF_INET */
	fib.ifindex = skb->ifindex;
	fib.tbid = skb->mark;
	fib.ipv4_src = iph->saddr;
	fib.ipv4_dst = iph->daddr;
	if (bpf_fib_lookup(skb, &fib, sizeof(fib), BPF_FIB_LOOKUP_DIRECT | BPF_FIB_LOOKUP_TBID))
		return TC_ACT_SHOT;
	return TC_ACT_UNSPEC;
}
