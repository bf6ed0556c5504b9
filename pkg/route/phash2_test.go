package route

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPhash2 checks the port of erlang:phash2 against values Erlang
// computed: each want is erlang:phash2(Keys, 4294967296) (the whole
// make_hash2 value) and erlang:phash2(Keys, 134217728) (the range
// x-modulus-hash uses), run by escript on Erlang/OTP 25.2.3 with Keys the
// list of binaries shown. The cases cover every tail length of the 12-byte
// blocks (0, 1, 11, 12, 13, 24, 25 bytes), empty binaries, repeated and
// several keys, UTF-8 and high bytes, and the empty list.
func TestPhash2(t *testing.T) {
	tests := []struct {
		keys      []string
		full, r27 uint32
	}{
		{[]string{}, 3468870702, 113427502},
		{[]string{""}, 440873397, 38220213},
		{[]string{"a"}, 3543352798, 53691870},
		{[]string{"b"}, 2564691422, 14554590},
		{[]string{"order.created"}, 158037201, 23819473},
		{[]string{"order.created", "cc.one"}, 431399128, 28745944},
		{[]string{"abcdefghijk"}, 1840297951, 95467487},
		{[]string{"abcdefghijkl"}, 3176216688, 89208944},
		{[]string{"abcdefghijklm"}, 1435586393, 93409113},
		{[]string{"abcdefghijklmnopqrstuvwx"}, 442241841, 39588657},
		{[]string{"abcdefghijklmnopqrstuvwxy"}, 63233603, 63233603},
		{[]string{"", ""}, 1484973906, 8578898},
		{[]string{"x", "", "y"}, 4184009693, 23260125},
		{[]string{"k", "k"}, 971165120, 31641024},
		{[]string{"caf\xc3\xa9.cr\xc3\xa8me"}, 928249992, 122943624},
		{[]string{"\xff\x00\x80\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d"}, 3421822283, 66379083},
		{[]string{"payments.eu.card.visa.captured.v2"}, 1805048939, 60218475},
		{[]string{"1", "2", "3", "4", "5"}, 2250474285, 102990637},
		{[]string{"c"}, 2148108414, 624766},
		{[]string{"d"}, 1619814315, 9201579},
		{[]string{"e"}, 2433099719, 17180615},
		{[]string{"f"}, 992587412, 53063316},
		{[]string{"g"}, 1077712655, 3970831},
		{[]string{"h"}, 3777801240, 19704856},
	}
	for _, tc := range tests {
		if got := phash2(tc.keys, 0); got != tc.full {
			t.Errorf("phash2(%q, 2^32) = %d, want %d", tc.keys, got, tc.full)
		}
		if got := phash2(tc.keys, modulusHashRange); got != tc.r27 {
			t.Errorf("phash2(%q, 2^27) = %d, want %d", tc.keys, got, tc.r27)
		}
	}
}

// TestPhash2MatchesLiveBroker: a live RabbitMQ 4.3.6 (research notes
// rabbitmq-4.1-4.3.md §4) routed messages with the keys a…h through an
// x-modulus-hash exchange bound to three queues into the groups
// {a, b, d, f}, {c, g, h} and {e}: the same partition phash2 rem 3 makes.
func TestPhash2MatchesLiveBroker(t *testing.T) {
	groups := [][]string{{"a", "b", "d", "f"}, {"c", "g", "h"}, {"e"}}
	seen := map[uint32]int{}
	for i, g := range groups {
		for _, k := range g {
			r := phash2([]string{k}, modulusHashRange) % 3
			if j, ok := seen[r]; ok && j != i {
				t.Errorf("key %q falls with group %d, the broker put it in group %d", k, j, i)
			}
			seen[r] = i
		}
	}
	if len(seen) != 3 {
		t.Errorf("the keys fall into %d groups, the broker made 3", len(seen))
	}
}

// TestPhash2Vectors checks the port against erlang:phash2 of 300 random
// lists of binaries (testdata/phash2.txt says how Erlang made them).
func TestPhash2Vectors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "phash2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		list, hash, ok := strings.Cut(line, " ")
		want, err := strconv.ParseUint(hash, 10, 32)
		if !ok || err != nil || !strings.HasSuffix(list, "-") {
			t.Fatalf("bad line %q", line)
		}
		var keys []string // "-" is the empty list, ",-" the list of one empty binary
		if list != "-" {
			for _, h := range strings.Split(strings.TrimSuffix(list, ",-"), ",") {
				b, err := hex.DecodeString(h)
				if err != nil {
					t.Fatalf("bad line %q: %v", line, err)
				}
				keys = append(keys, string(b))
			}
		}
		if got := phash2(keys, 0); got != uint32(want) {
			t.Errorf("phash2(%q) = %d, Erlang says %d", keys, got, want)
		}
		n++
	}
	if n != 300 {
		t.Errorf("%d vectors, want 300", n)
	}
}
