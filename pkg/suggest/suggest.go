// Package suggest finds the spelling a user most likely meant, for the
// "did you mean" of errors and findings.
package suggest

import (
	"math"
	"strings"
)

// Closest returns the entry of known nearest to got by edit distance
// (ignoring case, - and _), or "" when none is near enough.
func Closest(got string, known []string) string {
	return closest(got, known, max(1, min(3, len(norm(got))/3)))
}

// Within is Closest for at most limit edits: for a guess that must be
// sure, where a wrong one misleads (a policy key RabbitMQ refuses, that may
// be another than the one suggested).
func Within(got string, known []string, limit int) string {
	return closest(got, known, limit)
}

func norm(s string) string {
	return strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(s))
}

func closest(got string, known []string, limit int) string {
	g := norm(got)
	best, bestDist := "", math.MaxInt
	for _, k := range known {
		dist := levenshtein(g, norm(k))
		if dist < bestDist {
			best, bestDist = k, dist
		}
	}
	if bestDist > limit {
		return ""
	}
	return best
}

// levenshtein is the edit distance of a and b, two letters swapped
// counting as one edit (optimal string alignment): "exchnage" is one edit
// from "exchange".
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// Name is Closest for a name the user chose (an exchange or a queue that
// is not declared, among those that are): none for a name of fewer than 3
// characters, where one edit is most of another name ("q" is no misspelt
// "a").
func Name(got string, known []string) string {
	if len([]rune(got)) < 3 {
		return ""
	}
	return Closest(got, known)
}
