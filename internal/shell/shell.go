// Package shell writes words as a POSIX shell reads them back, for the
// commands that mqctl's advice and errors tell a user to run.
package shell

import "strings"

// safe are the bytes a word may hold and be read back unquoted.
const safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._/:@%+=,"

// Quote is s as a shell reads it back: as it is when it holds only
// letters, digits and -._/:@%+=, (and is not empty), else in single
// quotes, a quote in it written '\”.
func Quote(s string) string {
	if s != "" && strings.Trim(s, safe) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Words quotes each of ss (Quote).
func Words(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Quote(s)
	}
	return out
}
