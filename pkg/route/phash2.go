package route

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

// mix is Bob Jenkins' MIX(a, b, c).
func mix(a, b, c uint32) (uint32, uint32, uint32) {
	a -= b
	a -= c
	a ^= c >> 13
	b -= c
	b -= a
	b ^= a << 8
	c -= a
	c -= b
	c ^= b >> 13
	a -= b
	a -= c
	a ^= c >> 12
	b -= c
	b -= a
	b ^= a << 16
	c -= a
	c -= b
	c ^= b >> 5
	a -= b
	a -= c
	a ^= c >> 3
	b -= c
	b -= a
	b ^= a << 10
	c -= a
	c -= b
	c ^= b >> 15
	return a, b, c
}

// blockHash is make_hash2's block_hash (Bob Jenkins' lookup2 hash) of k
// with initial value initval.
func blockHash(k []byte, initval uint32) uint32 {
	a, b, c := hconst, hconst, initval
	length := uint32(len(k))
	for len(k) >= 12 {
		a += uint32(k[0]) | uint32(k[1])<<8 | uint32(k[2])<<16 | uint32(k[3])<<24
		b += uint32(k[4]) | uint32(k[5])<<8 | uint32(k[6])<<16 | uint32(k[7])<<24
		c += uint32(k[8]) | uint32(k[9])<<8 | uint32(k[10])<<16 | uint32(k[11])<<24
		a, b, c = mix(a, b, c)
		k = k[12:]
	}
	c += length
	// The C switch falls through from the number of bytes left.
	n := len(k)
	if n >= 11 {
		c += uint32(k[10]) << 24
	}
	if n >= 10 {
		c += uint32(k[9]) << 16
	}
	if n >= 9 {
		c += uint32(k[8]) << 8
	}
	if n >= 8 {
		b += uint32(k[7]) << 24
	}
	if n >= 7 {
		b += uint32(k[6]) << 16
	}
	if n >= 6 {
		b += uint32(k[5]) << 8
	}
	if n >= 5 {
		b += uint32(k[4])
	}
	if n >= 4 {
		a += uint32(k[3]) << 24
	}
	if n >= 3 {
		a += uint32(k[2]) << 16
	}
	if n >= 2 {
		a += uint32(k[1]) << 8
	}
	if n >= 1 {
		a += uint32(k[0])
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
