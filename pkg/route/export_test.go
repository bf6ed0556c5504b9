package route

// Unshared returns a copy of s that routes every message on its own,
// without the shared results of message-blind exchanges.
func Unshared(s *Simulator) *Simulator {
	c := *s
	c.blind = nil
	return &c
}

// SharedRoutes returns how many exchanges of s have a shared result.
func SharedRoutes(s *Simulator) int {
	n := 0
	for _, f := range s.blind {
		if f.ok {
			n++
		}
	}
	return n
}

// Blind returns the message-blind exchanges of s.
func Blind(s *Simulator) map[string]bool {
	out := map[string]bool{}
	for name := range s.blind {
		out[name] = true
	}
	return out
}
