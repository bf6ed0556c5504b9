package route

import "encoding/binary"

// erlang:phash2 of a list of binaries, as RabbitMQ 4.3's x-modulus-hash
// exchange computes it over a message's routing keys
// (rabbit_exchange_type_modulus_hash:route/3 at v4.3.5:
// erlang:phash2(mc:routing_keys(Msg), 134217728)).
//
// The port follows make_hash2 in erts/emulator/beam/utils.c (Erlang/OTP),
// for the only terms it is given here: a proper list whose elements are
// binaries. phash2 is documented as portable: the same term hashes the
// same on every machine and ERTS version. phash2_test.go checks it against
// values computed by erlang:phash2/2 itself (OTP 25.2.3), and against the
// partition a live RabbitMQ 4.3.6 made of keys a…h over three queues.

// hconst is the golden ratio, Bob Jenkins' arbitrary value; hconst2 and
// hconst13 are hconst × 2 and × 13 mod 2^32 (HCONST_2, HCONST_13).
const (
	hconst   uint32 = 0x9e3779b9
	hconst2  uint32 = 0x3c6ef372
	hconst13 uint32 = 0x08d12e65
	// nilDef is NIL_DEF, the tag make_hash2 mixes in for the [] that ends
	// a list; nilHash is the hash of [] alone.
	nilDef  uint32 = 0x2
	nilHash uint32 = 3468870702
)

// mix is Bob Jenkins' MIX(a, b, c): three rounds of the same steps with
// these shifts (right, left, right).
func mix(a, b, c uint32) (uint32, uint32, uint32) {
	for _, r := range [3][3]uint{{13, 8, 13}, {12, 16, 5}, {3, 10, 15}} {
		a -= b
		a -= c
		a ^= c >> r[0]
		b -= c
		b -= a
		b ^= a << r[1]
		c -= a
		c -= b
		c ^= b >> r[2]
	}
	return a, b, c
}

// blockHash is make_hash2's block_hash (Bob Jenkins' lookup2 hash) of k
// with initial value initval: 12-byte blocks read little-endian into a, b
// and c, then the length added to c and the tail's bytes to a, b and c
// (c's lowest byte is the length's).
func blockHash(k []byte, initval uint32) uint32 {
	a, b, c := hconst, hconst, initval
	length := uint32(len(k))
	for ; len(k) >= 12; k = k[12:] {
		a += binary.LittleEndian.Uint32(k[0:4])
		b += binary.LittleEndian.Uint32(k[4:8])
		c += binary.LittleEndian.Uint32(k[8:12])
		a, b, c = mix(a, b, c)
	}
	c += length
	for i, x := range k {
		switch {
		case i < 4:
			a += uint32(x) << (8 * i)
		case i < 8:
			b += uint32(x) << (8 * (i - 4))
		default:
			c += uint32(x) << (8 * (i - 7))
		}
	}
	_, _, c = mix(a, b, c)
	return c
}

// makeHash2Binaries is make_hash2 of the Erlang list of binaries keys:
// each binary is block-hashed with HCONST_13 plus the hash so far (an empty
// binary is that sum), then the closing [] is mixed in (UINT32_HASH of
// NIL_DEF with HCONST_2), or gives nilHash when the hash is still 0.
func makeHash2Binaries(keys []string) uint32 {
	var hash uint32
	for _, k := range keys {
		con := hconst13 + hash
		if k == "" {
			hash = con
		} else {
			hash = blockHash([]byte(k), con)
		}
	}
	if hash == 0 {
		return nilHash
	}
	_, _, hash = mix(hconst2+nilDef, hconst2, hash)
	return hash
}

// phash2 is erlang:phash2(Keys, Range) for a list of binaries: make_hash2
// modulo rng (a range of 0 stands for 2^32, the whole hash).
func phash2(keys []string, rng uint32) uint32 {
	h := makeHash2Binaries(keys)
	if rng == 0 {
		return h
	}
	return h % rng
}

// modulusHashRange is the range x-modulus-hash gives phash2 (2^27).
const modulusHashRange = 134217728
