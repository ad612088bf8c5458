package limits

//go:generate go run ../internal/genlimits -header ../router.h -out limits.go
