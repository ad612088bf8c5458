package unix

// Make linter happy with this comment.
const (
	LINKLAYER_UNSPEC = iota
	LINKLAYER_ETHERNET
	LINKLAYER_ATM
)

// Make linter happy with this comment.
const (
	ATM_CELL_PAYLOAD = 48
	ATM_CELL_SIZE    = 53
)
