package frr

import "regexp"

var secretRe = regexp.MustCompile(`(?i)(\b(?:password|authentication-key|message-digest-key \d+ md5)\s+)\S+`)

// Redact hides secrets (neighbor passwords and similar) in FRR text so it can
// be logged or returned in errors.
func Redact(s string) string { return secretRe.ReplaceAllString(s, "${1}<redacted>") }
