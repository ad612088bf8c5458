// SPDX-License-Identifier: GPL-2.0-only
//go:build ignore

/*
 * The network-operator router: one tc program (tc_router) and one XDP program
 * (xdp_router) compiled from the same inline function, specialised by hook.
 *
 * Per packet: read the live table slot from `version` (once for all lookups
 * that decide the packet), look up the ingress
 * {ifindex, vlan} in iface_cache, else in iface_table, then either
 *   route mode:    bpf_fib_lookup in the VRF's kernel table and redirect (in
 *                  the table of a source-based routing VRF instead when the
 *                  source is in sbr_table and the VRF has VRF_F_SBR; the VRF
 *                  routing by main through the kernel's rules, so that the
 *                  node's own addresses in table local go up the stack), or
 *   redirect mode: redirect to the egress interface from redirect_table.
 * fast_path() takes the common case (untagged unicast IPv4/IPv6, route mode,
 * interface in iface_cache, no check failing) with fewer instructions to the
 * same forwarding step; decide() classifies every other packet.
 * Everything the program does not forward goes to the kernel unchanged. Every
 * exit is counted exactly once in vrf_counters (by VRF and reason), except for
 * an interface entry whose VRF id has no counter (>= MAX_VRFS).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "router.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IFACE_TABLE_SIZE);
	__type(key, struct iface_key);
	__type(value, struct iface_value);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} iface_table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, IFACE_CACHE_SIZE);
	__type(key, __u32);
	__type(value, struct iface_cache_value);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} iface_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VRF_TABLE_SIZE);
	__type(key, struct vrf_key);
	__type(value, struct vrf_value);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vrf_table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, REDIRECT_TABLE_SIZE);
	__type(key, struct redirect_key);
	__type(value, struct redirect_value);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} redirect_table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, SBR_TABLE_SIZE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sbr_key);
	__type(value, struct sbr_value);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sbr_table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_VRFS);
	__type(key, __u32);
	__type(value, struct vrf_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vrf_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct version_info);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} version SEC(".maps");

/* From linux/socket.h, which needs libc headers. */
#define AF_INET 2
#define AF_INET6 10

#define HOOK_TC 0
#define HOOK_XDP 1

#define VLAN_HLEN 4
#define VLAN_VID_MASK 0x0fff
#define IP_MF 0x2000
#define IP_OFFSET 0x1fff
/* Enough linear data for Ethernet + 802.1Q + IPv6 + the first ICMPv6 bytes. */
#define PULL_LEN 64

struct vlanhdr {
	__be16 tci;
	__be16 encap_proto;
};

/* A parsed packet: what the forwarding step needs after classification. */
struct pkt {
	__u32 ifindex;
	__u32 len;     /* bytes counted: skb->len (tc) or the frame length (XDP) */
	__u32 l3off;   /* 14, or 18 with an inline 802.1Q tag */
	__u16 vlan;
	__u8 tagged;   /* any 802.1Q tag: inline, or in skb->vlan_tci (tc) */
	__u8 inline_tag;
	__be16 proto;  /* ETH_P_IP or ETH_P_IPV6 once classified */
};

/*
 * One's complement sum of the 20-byte IPv4 header is 0xffff when valid. Each
 * fold keeps the sum modulo 0xffff (2^16 = 1) and nonzero unless it was 0:
 * from below 5 * 2^32, three folds reach 0..0xffff.
 */
static __always_inline int ipv4_csum_ok(const struct iphdr *iph)
{
	const __u32 *w = (const __u32 *)iph;
	__u64 s = (__u64)w[0] + w[1] + w[2] + w[3] + w[4];

	s = (s & 0xffff) + (s >> 16); /* < 2^16 + 5 * 2^16 */
	s = (s & 0xffff) + (s >> 16); /* <= 0xffff + 5 */
	s = (s & 0xffff) + (s >> 16); /* <= 0xffff */
	return s == 0xffff;
}

/* Decrement the TTL and patch the checksum incrementally (RFC 1624, as the
 * kernel's ip_decrease_ttl). The header's one's complement sum is unchanged, so
 * a CHECKSUM_COMPLETE skb->csum stays valid. */
static __always_inline void ipv4_dec_ttl(struct iphdr *iph)
{
	__u32 check = (__u32)iph->check;

	check += (__u32)bpf_htons(0x0100);
	iph->check = (__u16)(check + (check >= 0xffff));
	iph->ttl--;
}

/*
 * The kernel's struct sk_buff as far as the router reads it: CO-RE places the
 * field from the running kernel's BTF (the ___ suffix is a local name only).
 */
struct sk_buff___router {
	__u8 ip_summed : 2;
} __attribute__((preserve_access_index));

/* A kfunc the verifier turns into a register move (Linux 6.2). Weak: on an
 * older kernel the loader leaves the call unresolved and clears KF_KERN_CTX, so
 * the verifier prunes it as dead code. */
extern void *bpf_cast_to_kern_ctx(void *obj) __ksym __weak;

/*
 * What the running kernel offers, set at load time (bpf/features.go): one
 * program object for every kernel, its variant picked by constants the
 * verifier folds. Every bit defaults to on, so a load that forgets to probe
 * fails loudly on an old kernel instead of forwarding from the wrong table.
 */
#define KF_KERN_CTX (1U << 0) /* bpf_cast_to_kern_ctx (6.2) */
#define KF_FIB_TBID (1U << 1) /* BPF_FIB_LOOKUP_TBID (6.5) */
volatile const __u32 kernel_features = KF_KERN_CTX | KF_FIB_TBID;

/*
 * The lookup flags for a VRF's table: by table id where the kernel takes one;
 * else the table of fib.ifindex's VRF device (the agent then needs VRF devices
 * and refuses table-only VRFs and source-based routing, see bpf/features.go).
 */
static __always_inline __u32 table_lookup_flags(void)
{
	if (kernel_features & KF_FIB_TBID)
		return BPF_FIB_LOOKUP_DIRECT | BPF_FIB_LOOKUP_TBID;
	return BPF_FIB_LOOKUP_DIRECT;
}

#define CHECKSUM_COMPLETE 2
/* __builtin_preserve_field_info kinds (enum bpf_field_info_kind). */
#define FIELD_BYTE_OFFSET 0
#define FIELD_BYTE_SIZE 1
#define FIELD_LSHIFT_U64 4
#define FIELD_RSHIFT_U64 5

/*
 * skb->ip_summed == CHECKSUM_COMPLETE, read directly (no helper call): the
 * bitfield's byte offset, load size and shifts are relocated at load time.
 */
static __always_inline int skb_csum_complete(struct __sk_buff *ctx)
{
	struct sk_buff___router *skb = bpf_cast_to_kern_ctx(ctx);
	const void *at = (const void *)skb + __builtin_preserve_field_info(skb->ip_summed, FIELD_BYTE_OFFSET);
	__u64 v;

	switch (__builtin_preserve_field_info(skb->ip_summed, FIELD_BYTE_SIZE)) {
	case 1:
		v = *(const __u8 *)at;
		break;
	case 2:
		v = *(const __u16 *)at;
		break;
	case 4:
		v = *(const __u32 *)at;
		break;
	default:
		v = *(const __u64 *)at;
		break;
	}
	v <<= __builtin_preserve_field_info(skb->ip_summed, FIELD_LSHIFT_U64);
	v >>= __builtin_preserve_field_info(skb->ip_summed, FIELD_RSHIFT_U64);
	return v == CHECKSUM_COMPLETE;
}

static __always_inline void ipv6_dec_hop_limit(void *ctx, const int hook, struct ipv6hdr *ip6)
{
	/* payload_len, nexthdr, hop_limit: the 32-bit word the change lives in */
	__u32 *word = (__u32 *)&ip6->payload_len;
	__u32 old = *word;

	ip6->hop_limit--;
	if (hook == HOOK_TC && (!(kernel_features & KF_KERN_CTX) || skb_csum_complete(ctx))) {
		/* Keep a CHECKSUM_COMPLETE skb->csum (covers the IPv6 header)
		 * valid: add new - old. bpf_csum_update does nothing for the
		 * other checksum states; testing first saves its call where the
		 * kernel lets us read ip_summed. */
		__u64 d = (__u64)(__u32)~old + *word;

		d = (d & 0xffffffff) + (d >> 32);
		bpf_csum_update(ctx, d);
	}
}

/*
 * dmac and smac are 2-byte aligned (bpf_fib_lookup, redirect_value, the
 * callers' buffers): three 16-bit copies each instead of the six byte copies
 * memcpy makes of a __u8 array. The verifier checks the alignment of stack
 * accesses, not of packet accesses (amd64 and arm64 need none).
 */
static __always_inline void set_macs(void *dst, const __u8 *dmac, const __u8 *smac)
{
	const __u16 *d = (const __u16 *)dmac, *s = (const __u16 *)smac;
	__u16 *o = dst;

	o[0] = d[0];
	o[1] = d[1];
	o[2] = d[2];
	o[3] = s[0];
	o[4] = s[1];
	o[5] = s[2];
}

/*
 * After a forwarding decision: remove an 802.1Q tag, decrement TTL / hop limit
 * (dec_ttl), and write new MACs (set_mac). Returns 0, or -1 when a helper
 * failed before anything was changed. set_mac is a flag rather than a NULL
 * dmac: clang turns a conditional pointer into a mask the verifier rejects.
 */
static __always_inline int rewrite(void *ctx, const int hook, const struct pkt *p,
				   int dec_ttl, int set_mac, const __u8 *dmac, const __u8 *smac)
{
	void *data, *data_end;
	__u32 l3off = p->l3off;

	if (hook == HOOK_TC) {
		struct __sk_buff *skb = ctx;

		if (p->tagged) {
			if (bpf_skb_vlan_pop(skb))
				return -1;
			l3off = ETH_HLEN;
		}
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
	} else {
		struct xdp_md *xdp = ctx;

		data = (void *)(long)xdp->data;
		data_end = (void *)(long)xdp->data_end;
	}

	if (dec_ttl) {
		if (p->proto == bpf_htons(ETH_P_IP)) {
			struct iphdr *iph = data + l3off;

			if ((void *)(iph + 1) > data_end)
				return -1;
			ipv4_dec_ttl(iph);
		} else {
			struct ipv6hdr *ip6 = data + l3off;

			if ((void *)(ip6 + 1) > data_end)
				return -1;
			ipv6_dec_hop_limit(ctx, hook, ip6);
		}
	}

	if (hook == HOOK_XDP && p->inline_tag) {
		/* Drop the tag by writing the MACs 4 bytes later, over the old
		 * source MAC and the tag, then moving the frame start. The inner
		 * ethertype already sits right before the L3 header. */
		__u8 macs[2 * ETH_ALEN] __attribute__((aligned(2)));

		if (data + ETH_HLEN + VLAN_HLEN > data_end)
			return -1;
		if (set_mac)
			set_macs(macs, dmac, smac);
		else
			__builtin_memcpy(macs, data, sizeof(macs));
		__builtin_memcpy(data + VLAN_HLEN, macs, sizeof(macs));
		if (bpf_xdp_adjust_head(ctx, VLAN_HLEN))
			return -1;
		return 0;
	}

	if (set_mac) {
		if (data + ETH_HLEN > data_end)
			return -1;
		set_macs(data, dmac, smac);
	}
	return 0;
}

/*
 * Source-based routing: the table of the sbr VRF whose prefix holds the
 * source, as the kernel's "from <prefix> lookup <table>" rule; the packet is
 * then counted under that VRF. The forwarding check stays the ingress
 * interface's (fib.ifindex), as in the kernel.
 */
static __always_inline void sbr_lookup(struct bpf_fib_lookup *fib, __u32 slot, __u32 *vrf_out)
{
	struct sbr_key sk = { .prefixlen = 32 + 128, .slot = slot };
	struct sbr_value *sv;

	if (fib->family == AF_INET) {
		sk.addr[10] = 0xff;
		sk.addr[11] = 0xff;
		__builtin_memcpy(&sk.addr[12], &fib->ipv4_src, 4);
	} else {
		__builtin_memcpy(sk.addr, fib->ipv6_src, 16);
	}
	sv = bpf_map_lookup_elem(&sbr_table, &sk);
	if (!sv)
		return;
	fib->tbid = sv->table_id;
	*vrf_out = sv->vrf_id;
}

/*
 * Whether the untagged entry of egress (in iface_cache, else in iface_table)
 * has IFACE_F_PEER: a veth whose peer is in another namespace.
 */
static __always_inline int egress_is_peer(__u32 egress, __u32 slot, __u64 stamp)
{
	__u32 idx = (slot & 1) * IFACE_CACHE_BUCKETS + iface_cache_bucket(egress, 0);
	struct iface_cache_value *ce = bpf_map_lookup_elem(&iface_cache, &idx);
	struct iface_key ik = { .slot = slot, .ifindex = egress };
	struct iface_value *iv;

	if (ce && ce->stamp == stamp && ce->ifindex == egress && ce->vlan == 0)
		return ce->flags & IFACE_F_PEER;
	iv = bpf_map_lookup_elem(&iface_table, &ik);
	return iv && (iv->flags & IFACE_F_PEER);
}

/*
 * Forward by a FIB lookup: the lookup's parameters from the packet (fib.ifindex
 * and fib.tbid are the caller's), then the lookup with flags, then the
 * rewrite and redirect its result asks for. vrf_flags are the ingress VRF's
 * (VRF_F_SBR, VRF_F_PEERS); stamp is the live tables' iface_cache stamp.
 */
static __always_inline __u32 fwd_fib(void *ctx, const int hook, const struct pkt *p,
				     void *l3, void *data_end, struct bpf_fib_lookup *fib,
				     __u32 flags, __u32 vrf_flags, __u32 slot, __u64 stamp, int strict,
				     __u32 *vrf_out, long *ret)
{
	long rc;

	if (p->proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = l3;
		__be16 *ports = (void *)(iph + 1);

		if ((void *)(iph + 1) > data_end)
			return REASON_PASS_ERROR;
		fib->family = AF_INET;
		fib->tos = iph->tos;
		fib->l4_protocol = iph->protocol;
		fib->ipv4_src = iph->saddr;
		fib->ipv4_dst = iph->daddr;
		/* tc: a set tot_len makes GSO packets fail the MTU check. */
		if (hook == HOOK_XDP)
			fib->tot_len = bpf_ntohs(iph->tot_len);
		/* Ports feed multipath hashing (fib_multipath_hash_policy). */
		if ((iph->protocol == IPPROTO_TCP || iph->protocol == IPPROTO_UDP) &&
		    (void *)(ports + 2) <= data_end) {
			fib->sport = ports[0];
			fib->dport = ports[1];
		}
	} else {
		struct ipv6hdr *ip6 = l3;
		__be16 *ports = (void *)(ip6 + 1);

		if ((void *)(ip6 + 1) > data_end)
			return REASON_PASS_ERROR;
		fib->family = AF_INET6;
		fib->flowinfo = *(__be32 *)ip6 & bpf_htonl(0x0fffffff);
		fib->l4_protocol = ip6->nexthdr;
		__builtin_memcpy(fib->ipv6_src, &ip6->saddr, sizeof(fib->ipv6_src));
		__builtin_memcpy(fib->ipv6_dst, &ip6->daddr, sizeof(fib->ipv6_dst));
		if (hook == HOOK_XDP)
			fib->tot_len = bpf_ntohs(ip6->payload_len) + sizeof(*ip6);
		if ((ip6->nexthdr == IPPROTO_TCP || ip6->nexthdr == IPPROTO_UDP) &&
		    (void *)(ports + 2) <= data_end) {
			fib->sport = ports[0];
			fib->dport = ports[1];
		}
	}

	/* One flag test when no source-based routing applies. */
	if (vrf_flags & VRF_F_SBR)
		sbr_lookup(fib, slot, vrf_out);
	/*
	 * A VRF routing by main (the cluster VRF) looks up as the kernel routes
	 * a packet from fib->ifindex: through its rules, so the local table
	 * (rule 0) first. Main alone misses the node's own addresses, which
	 * live in table local (IPv6 always, IPv4 once any rule exists), and
	 * would send them out again; the rules' lookup returns NOT_FWDED for
	 * them and the kernel delivers them. A source-based routing match
	 * (tbid: its VRF's table) and mode fib (tbid 0) look up directly.
	 */
	if (fib->tbid == MAIN_TABLE_ID)
		flags = 0;

	rc = bpf_fib_lookup(ctx, fib, sizeof(*fib), flags);
	switch (rc) {
	case BPF_FIB_LKUP_RET_SUCCESS:
		if (rewrite(ctx, hook, p, 1, 1, fib->dmac, fib->smac))
			return REASON_PASS_ERROR;
		/* Into a pod's veth: straight to the peer's receive path, without
		 * the veth's transmit and the backlog queue behind it (one flag
		 * test when the tables have no such interface). */
		if (hook == HOOK_TC && (vrf_flags & VRF_F_PEERS) && egress_is_peer(fib->ifindex, slot, stamp)) {
			*ret = bpf_redirect_peer(fib->ifindex, 0);
			return REASON_FWD_PEER;
		}
		*ret = bpf_redirect(fib->ifindex, 0);
		return REASON_FWD_FIB;
	case BPF_FIB_LKUP_RET_NO_NEIGH:
		if (hook == HOOK_TC) {
			/* The lookup left the next hop (gateway or destination)
			 * and its family in the params. */
			struct bpf_redir_neigh nh = { .nh_family = fib->family };

			if (fib->family == AF_INET)
				nh.ipv4_nh = fib->ipv4_dst;
			else
				__builtin_memcpy(nh.ipv6_nh, fib->ipv6_dst, sizeof(nh.ipv6_nh));
			if (rewrite(ctx, hook, p, 1, 0, fib->dmac, fib->smac))
				return REASON_PASS_ERROR;
			*ret = bpf_redirect_neigh(fib->ifindex, &nh, sizeof(nh), 0);
			return REASON_FWD_NEIGH;
		}
		return REASON_PASS_NO_NEIGH;
	case BPF_FIB_LKUP_RET_NOT_FWDED:
		/* Local addresses (local routes in the VRF table) and missing
		 * tables: the kernel decides, even on strict interfaces. */
		return REASON_PASS_NOT_FWDED;
	case BPF_FIB_LKUP_RET_FWD_DISABLED:
		return strict ? REASON_DROP_FWD_DISABLED : REASON_PASS_FWD_DISABLED;
	case BPF_FIB_LKUP_RET_FRAG_NEEDED:
		return REASON_PASS_FRAG_NEEDED;
	default:
		return strict ? REASON_DROP_FIB : REASON_PASS_FIB_OTHER;
	}
}

/* What route mode needs of the interface's VRF: from iface_cache, else from vrf_table. */
struct route_vrf {
	__u32 table_id;
	__u32 lookup_ifindex;
	__u32 flags;
	__u32 known; /* filled from iface_cache */
};

static __always_inline __u32 fwd_route(void *ctx, const int hook, const struct pkt *p,
				       void *l3, void *data_end, __u32 vrf_id, struct route_vrf *rv,
				       __u32 slot, __u64 stamp, int strict, __u32 *vrf_out, long *ret)
{
	struct bpf_fib_lookup fib = {};

	if (!rv->known) {
		struct vrf_key vk = { .slot = slot, .vrf_id = vrf_id };
		struct vrf_value *vv = bpf_map_lookup_elem(&vrf_table, &vk);

		if (!vv)
			return strict ? REASON_DROP_NO_VRF : REASON_PASS_NO_VRF;
		rv->table_id = vv->table_id;
		rv->lookup_ifindex = vv->lookup_ifindex;
		rv->flags = vv->flags;
	}
	fib.ifindex = rv->lookup_ifindex ? rv->lookup_ifindex : p->ifindex;
	fib.tbid = rv->table_id;
	return fwd_fib(ctx, hook, p, l3, data_end, &fib, table_lookup_flags(),
		       rv->flags, slot, stamp, strict, vrf_out, ret);
}

/*
 * Mode fib: the kernel picks the table from the ingress device (its VRF
 * device's, else main), as for a packet it forwards itself.
 */
static __always_inline __u32 fwd_device(void *ctx, const int hook, const struct pkt *p,
					void *l3, void *data_end, __u32 slot, int strict,
					__u32 *vrf_out, long *ret)
{
	struct bpf_fib_lookup fib = { .ifindex = p->ifindex };

	return fwd_fib(ctx, hook, p, l3, data_end, &fib, BPF_FIB_LOOKUP_DIRECT, 0, slot, 0, strict,
		       vrf_out, ret);
}

static __always_inline __u32 fwd_redirect(void *ctx, const int hook, const struct pkt *p,
					  __u32 slot, int strict, long *ret)
{
	struct redirect_key rk = { .slot = slot, .ifindex = p->ifindex };
	struct redirect_value *rv = bpf_map_lookup_elem(&redirect_table, &rk);
	__u32 egress, flags;
	__u8 macs[2 * ETH_ALEN] __attribute__((aligned(2)));

	if (!rv)
		return strict ? REASON_DROP_NO_REDIRECT : REASON_PASS_NO_REDIRECT;
	egress = rv->egress_ifindex;
	flags = rv->flags;
	__builtin_memcpy(macs, rv->dmac, ETH_ALEN);
	__builtin_memcpy(macs + ETH_ALEN, rv->smac, ETH_ALEN);

	if (rewrite(ctx, hook, p, 0, flags & REDIRECT_F_REWRITE_MAC, macs, macs + ETH_ALEN))
		return REASON_PASS_ERROR;
	if (hook == HOOK_TC && (flags & REDIRECT_F_PEER)) {
		*ret = bpf_redirect_peer(egress, 0);
		return REASON_REDIRECT_PEER;
	}
	*ret = bpf_redirect(egress, 0);
	return REASON_REDIRECT;
}

/*
 * IPv4 checks before forwarding. Returns REASON_MAX when the packet may be
 * forwarded. The order of the checks defines the reason a packet is counted
 * under; the Go model in the tests follows the same order.
 */
static __always_inline __u32 classify_ipv4(const int hook, const struct pkt *p, struct iphdr *iph,
					   void *data_end, int route, int strict)
{
	__u32 tot;
	__u8 s0, d0;

	if ((void *)(iph + 1) > data_end || iph->version != 4 || iph->ihl < 5)
		goto malformed;
	tot = bpf_ntohs(iph->tot_len);
	/* BIG TCP: GSO packets above 64 KiB carry tot_len 0 (see iph_totlen()). */
	if (hook == HOOK_TC && tot == 0 && p->len - p->l3off > 0xffff)
		tot = p->len - p->l3off;
	if (tot < (__u32)iph->ihl * 4 || tot > p->len - p->l3off)
		goto malformed;
	if (iph->ihl != 5)
		return REASON_PASS_OPTIONS;
	if (!ipv4_csum_ok(iph))
		goto malformed;

	d0 = ((__u8 *)&iph->daddr)[0];
	s0 = ((__u8 *)&iph->saddr)[0];
	if (d0 >= 224)
		return REASON_PASS_NOT_UNICAST; /* multicast, reserved, broadcast */
	if (d0 == 0 || d0 == 127 || s0 == 0 || s0 == 127 || s0 >= 224)
		return REASON_PASS_MARTIAN;
	if (iph->frag_off & bpf_htons(IP_MF | IP_OFFSET))
		return REASON_PASS_FRAGMENT;
	if (route && iph->ttl <= 1)
		return REASON_PASS_TTL;
	return REASON_MAX;
malformed:
	return strict ? REASON_DROP_MALFORMED : REASON_PASS_MALFORMED;
}

static __always_inline int ipv6_is_loopback(const struct in6_addr *a)
{
	return (a->in6_u.u6_addr32[0] | a->in6_u.u6_addr32[1] | a->in6_u.u6_addr32[2]) == 0 &&
	       a->in6_u.u6_addr32[3] == bpf_htonl(1);
}

static __always_inline int ipv6_is_unspecified(const struct in6_addr *a)
{
	return (a->in6_u.u6_addr32[0] | a->in6_u.u6_addr32[1] | a->in6_u.u6_addr32[2] |
		a->in6_u.u6_addr32[3]) == 0;
}

static __always_inline int ipv6_is_link_local(const struct in6_addr *a)
{
	return a->in6_u.u6_addr8[0] == 0xfe && (a->in6_u.u6_addr8[1] & 0xc0) == 0x80;
}

static __always_inline __u32 classify_ipv6(const struct pkt *p, struct ipv6hdr *ip6,
					   void *data_end, int route, int strict)
{
	__u32 plen;

	if ((void *)(ip6 + 1) > data_end || ip6->version != 6)
		goto malformed;
	plen = bpf_ntohs(ip6->payload_len);
	if (plen + sizeof(*ip6) > p->len - p->l3off)
		goto malformed;

	if (ip6->daddr.in6_u.u6_addr8[0] == 0xff)
		return REASON_PASS_NOT_UNICAST;
	if (ipv6_is_loopback(&ip6->daddr) || ipv6_is_unspecified(&ip6->daddr) ||
	    ipv6_is_loopback(&ip6->saddr) || ip6->saddr.in6_u.u6_addr8[0] == 0xff)
		return REASON_PASS_MARTIAN;
	if (ipv6_is_link_local(&ip6->daddr) || ipv6_is_link_local(&ip6->saddr))
		return REASON_PASS_LINK_LOCAL;

	switch (ip6->nexthdr) {
	case IPPROTO_HOPOPTS:
	case IPPROTO_ROUTING:
	case IPPROTO_DSTOPTS:
	case IPPROTO_MH:
	case 139: /* HIP */
	case 140: /* Shim6 */
	case 253: /* experimental */
	case 254:
		return REASON_PASS_EXT_HEADER;
	case IPPROTO_FRAGMENT:
		return REASON_PASS_FRAGMENT;
	case IPPROTO_ICMPV6: {
		__u8 *icmp = (void *)(ip6 + 1);

		/* type, code, checksum */
		if ((void *)(icmp + 4) > data_end || plen < 4)
			goto malformed;
		if (icmp[0] >= 133 && icmp[0] <= 137)
			return REASON_PASS_ND;
		break;
	}
	}
	if (route && ip6->hop_limit <= 1)
		return REASON_PASS_TTL;
	return REASON_MAX;
malformed:
	return strict ? REASON_DROP_MALFORMED : REASON_PASS_MALFORMED;
}

/*
 * IPv4 first octets of addresses the IPv4 checks let through: 1-126 and
 * 128-223 (not "this network", loopback, multicast, reserved, broadcast).
 */
static __always_inline int ipv4_plain_octet(__u8 o)
{
	return (__u8)(o - 1) < 223 && o != 127;
}

/*
 * IPv6 first octets of global unicast (2000::/3) and unique local (fc00::/7)
 * addresses: none is multicast, loopback, unspecified or link-local.
 */
static __always_inline int ipv6_plain_octet(__u8 o)
{
	return (o & 0xe0) == 0x20 || (o & 0xfe) == 0xfc;
}

/*
 * The common case in few instructions: an untagged, unicast IPv4 (header
 * without options) or IPv6 (TCP or UDP right after the header) packet, none of
 * whose checks fails, on a route-mode interface found in iface_cache. Every
 * condition below implies that decide()'s checks pass, so the packet goes to
 * the same fwd_fib() as there. Returns REASON_MAX for every other packet,
 * having changed nothing: decide() then classifies it.
 */
static __always_inline __u32 fast_path(void *ctx, const int hook, __u32 *vrf_out, __u32 *len_out,
				       long *ret)
{
	void *data, *data_end;
	struct pkt p = { .l3off = ETH_HLEN };
	struct version_info *ver;
	struct iface_cache_value *ce;
	struct route_vrf rv;
	struct bpf_fib_lookup fib = {};
	__u32 zero = 0, slot, idx;
	__u64 stamp;
	__u8 *l3;

	if (hook == HOOK_TC) {
		struct __sk_buff *skb = ctx;

		if (skb->vlan_present || skb->pkt_type != PACKET_HOST)
			return REASON_MAX;
		p.ifindex = skb->ifindex;
		p.len = skb->len;
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
	} else {
		struct xdp_md *xdp = ctx;

		p.ifindex = xdp->ingress_ifindex;
		data = (void *)(long)xdp->data;
		data_end = (void *)(long)xdp->data_end;
		p.len = data_end - data;
	}
	/* Ethernet + IPv6 header + ports: no pull, and enough for either family. */
	if (data + ETH_HLEN + sizeof(struct ipv6hdr) + 4 > data_end || (((__u8 *)data)[0] & 1))
		return REASON_MAX;
	p.proto = ((__be16 *)data)[6];
	l3 = data + ETH_HLEN;

	if (p.proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = (void *)l3;
		__u32 tot = bpf_ntohs(iph->tot_len);

		if (l3[0] != 0x45 || tot < sizeof(*iph) || tot > p.len - ETH_HLEN || !ipv4_csum_ok(iph) ||
		    !ipv4_plain_octet(((__u8 *)&iph->daddr)[0]) || !ipv4_plain_octet(((__u8 *)&iph->saddr)[0]) ||
		    (iph->frag_off & bpf_htons(IP_MF | IP_OFFSET)) || iph->ttl <= 1)
			return REASON_MAX;
	} else if (p.proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)l3;

		if ((l3[0] >> 4) != 6 || bpf_ntohs(ip6->payload_len) + sizeof(*ip6) > p.len - ETH_HLEN ||
		    !ipv6_plain_octet(ip6->daddr.in6_u.u6_addr8[0]) ||
		    !ipv6_plain_octet(ip6->saddr.in6_u.u6_addr8[0]) ||
		    (ip6->nexthdr != IPPROTO_TCP && ip6->nexthdr != IPPROTO_UDP) || ip6->hop_limit <= 1)
			return REASON_MAX;
	} else {
		return REASON_MAX;
	}

	ver = bpf_map_lookup_elem(&version, &zero);
	if (!ver)
		return REASON_MAX;
	slot = *(volatile __u32 *)&ver->slot;
	stamp = *(volatile __u64 *)ver->tables_hash;
	idx = (slot & 1) * IFACE_CACHE_BUCKETS + iface_cache_bucket(p.ifindex, 0);
	ce = bpf_map_lookup_elem(&iface_cache, &idx);
	if (!ce || ce->stamp != stamp || ce->ifindex != p.ifindex || ce->vlan != 0 ||
	    ce->mode != IFACE_MODE_ROUTE)
		return REASON_MAX;

	*len_out = p.len;
	*vrf_out = ce->vrf_id;
	rv.flags = ce->vrf_flags;
	fib.ifindex = ce->lookup_ifindex ? ce->lookup_ifindex : p.ifindex;
	fib.tbid = ce->table_id;
	return fwd_fib(ctx, hook, &p, l3, data_end, &fib, table_lookup_flags(),
		       rv.flags, slot, stamp, ce->flags & IFACE_F_STRICT, vrf_out, ret);
}

static __always_inline __u32 decide(void *ctx, const int hook, __u32 *vrf_out, __u32 *len_out,
				    long *ret)
{
	void *data, *data_end;
	struct pkt p = {};
	struct version_info *ver;
	struct iface_key ik = {};
	struct iface_value *iv;
	struct iface_cache_value *ce;
	struct route_vrf rv = {};
	struct ethhdr *eth;
	__u32 zero = 0, slot, vrf_id, reason, idx;
	__u64 stamp;
	int strict, route, l2_ok = 0, s_tag = 0;
	__u8 mode;

	if (hook == HOOK_TC) {
		struct __sk_buff *skb = ctx;

		p.ifindex = skb->ifindex;
		p.len = skb->len;
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
		if (data + PULL_LEN > data_end && p.len > data_end - data) {
			/* Headers outside the linear area: pull them in. */
			bpf_skb_pull_data(skb, p.len < PULL_LEN ? p.len : PULL_LEN);
			data = (void *)(long)skb->data;
			data_end = (void *)(long)skb->data_end;
		}
		if (skb->vlan_present) {
			/* Tag already removed from the frame by the stack. An
			 * 802.1ad S-tag is not ours: such frames pass as not-IP. */
			p.vlan = skb->vlan_tci & VLAN_VID_MASK;
			p.tagged = 1;
			s_tag = skb->vlan_proto != bpf_htons(ETH_P_8021Q);
		}
	} else {
		struct xdp_md *xdp = ctx;

		p.ifindex = xdp->ingress_ifindex;
		data = (void *)(long)xdp->data;
		data_end = (void *)(long)xdp->data_end;
		p.len = data_end - data;
	}
	*len_out = p.len;

	ver = bpf_map_lookup_elem(&version, &zero);
	if (!ver)
		return REASON_PASS_ERROR;
	/* Read once: every lookup of this packet uses the same generation. */
	slot = *(volatile __u32 *)&ver->slot;
	stamp = *(volatile __u64 *)ver->tables_hash;

	eth = data;
	p.l3off = ETH_HLEN;
	if ((void *)(eth + 1) <= data_end) {
		l2_ok = 1;
		/* One 16-bit load: struct ethhdr is packed, clang reads its fields bytewise. */
		p.proto = ((__be16 *)data)[6];
		if (p.proto == bpf_htons(ETH_P_8021Q) && !p.tagged) {
			struct vlanhdr *vh = (void *)(eth + 1);

			if ((void *)(vh + 1) > data_end) {
				l2_ok = 0;
			} else {
				p.vlan = bpf_ntohs(vh->tci) & VLAN_VID_MASK;
				p.proto = vh->encap_proto;
				p.tagged = 1;
				p.inline_tag = 1;
				p.l3off = ETH_HLEN + VLAN_HLEN;
			}
		}
	}

	idx = (slot & 1) * IFACE_CACHE_BUCKETS + iface_cache_bucket(p.ifindex, p.vlan);
	ce = bpf_map_lookup_elem(&iface_cache, &idx);
	if (ce && ce->stamp == stamp && ce->ifindex == p.ifindex && ce->vlan == p.vlan) {
		vrf_id = ce->vrf_id;
		mode = ce->mode;
		strict = ce->flags & IFACE_F_STRICT;
		rv.table_id = ce->table_id;
		rv.lookup_ifindex = ce->lookup_ifindex;
		rv.flags = ce->vrf_flags;
		rv.known = mode == IFACE_MODE_ROUTE;
	} else {
		ik.slot = slot;
		ik.ifindex = p.ifindex;
		ik.vlan = p.vlan;
		iv = bpf_map_lookup_elem(&iface_table, &ik);
		if (!iv)
			return REASON_PASS_NO_IFACE;
		vrf_id = iv->vrf_id;
		mode = iv->mode;
		strict = iv->flags & IFACE_F_STRICT;
	}
	*vrf_out = vrf_id;
	route = mode == IFACE_MODE_ROUTE || mode == IFACE_MODE_FIB;
	if (!route && mode != IFACE_MODE_REDIRECT)
		return REASON_PASS_MODE;

	if (!l2_ok || (void *)(eth + 1) > data_end)
		return strict ? REASON_DROP_MALFORMED : REASON_PASS_MALFORMED;
	if (eth->h_dest[0] & 1)
		return REASON_PASS_NOT_UNICAST;
	if (hook == HOOK_TC && ((struct __sk_buff *)ctx)->pkt_type != PACKET_HOST)
		return REASON_PASS_NOT_UNICAST;

	if (s_tag)
		return REASON_PASS_NOT_IP;
	if (p.proto == bpf_htons(ETH_P_IP))
		reason = classify_ipv4(hook, &p, data + p.l3off, data_end, route, strict);
	else if (p.proto == bpf_htons(ETH_P_IPV6))
		reason = classify_ipv6(&p, data + p.l3off, data_end, route, strict);
	else
		return REASON_PASS_NOT_IP;
	if (reason != REASON_MAX)
		return reason;

	if (mode == IFACE_MODE_FIB)
		return fwd_device(ctx, hook, &p, data + p.l3off, data_end, slot, strict, vrf_out, ret);
	if (route)
		return fwd_route(ctx, hook, &p, data + p.l3off, data_end, vrf_id, &rv, slot, stamp, strict,
				 vrf_out, ret);
	return fwd_redirect(ctx, hook, &p, slot, strict, ret);
}

static __always_inline void count(__u32 vrf_id, __u32 reason, __u32 len)
{
	/* An id >= MAX_VRFS finds no entry: not counted rather than counted
	 * under another VRF (see MAX_VRFS). */
	struct vrf_stats *st = bpf_map_lookup_elem(&vrf_counters, &vrf_id);
	__u32 slot = reason & REASON_SLOT_MASK;

	if (!st || slot >= REASON_SLOTS)
		return;
	st->reasons[slot].packets++;
	st->reasons[slot].bytes += len;
}

static __always_inline int run(void *ctx, const int hook)
{
	__u32 vrf_id = 0, len = 0, reason, class;
	long ret = 0;

	reason = fast_path(ctx, hook, &vrf_id, &len, &ret);
	if (reason == REASON_MAX)
		reason = decide(ctx, hook, &vrf_id, &len, &ret);
	count(vrf_id, reason, len);
	/* The verdict is the reason's class (router.h), nothing else. */
	class = reason >> REASON_CLASS_SHIFT;
	if (class == REASON_CLASS_FORWARDED)
		return ret;
	if (class == REASON_CLASS_DROPPED)
		return hook == HOOK_TC ? TC_ACT_SHOT : XDP_DROP;
	/* TC_ACT_UNSPEC (== TCX_NEXT): later tcx programs / cls_bpf filters run. */
	return hook == HOOK_TC ? TC_ACT_UNSPEC : XDP_PASS;
}

SEC("tc")
int tc_router(struct __sk_buff *skb)
{
	return run(skb, HOOK_TC);
}

SEC("xdp")
int xdp_router(struct xdp_md *ctx)
{
	return run(ctx, HOOK_XDP);
}
