package rmqversion

import (
	"fmt"

	"github.com/mqctl/mqctl/pkg/topology"
)

// ArgWritten names argument arg of an object as its file writes it: the
// typed field that sets it, with the argument in parentheses
// ("limits.max_length (x-max-length)"), or the argument itself (written
// raw, or an object read from a broker).
func ArgWritten(m topology.Meta, arg string) string {
	if f, ok := m.ArgPos.Written(arg); ok {
		return f + " (" + arg + ")"
	}
	return arg
}

// ArgField is ArgWritten without the argument: the typed field alone
// ("limits.max_length"), for a fix, or a text that names the argument in
// parentheses already.
func ArgField(m topology.Meta, arg string) string {
	if f, ok := m.ArgPos.Written(arg); ok {
		return f
	}
	return arg
}

// argValueWritten names argument arg set to val as its file writes it:
// "limits.message_ttl (x-message-ttl): 345600000000", or
// "x-message-ttl: 345600000000".
func argValueWritten(m topology.Meta, arg string, val any) string {
	return ArgWritten(m, arg) + ": " + valueText(val)
}

// QueueArgValueFixWritten is QueueArgValueFix for an object whose file
// may set arg through a typed field (m.ArgPos): a limits.message_ttl or
// limits.expires past ten years is a duration to shorten, where the
// argument written raw is a number of milliseconds.
func (v Version) QueueArgValueFixWritten(m topology.Meta, typ, arg string, val any) string {
	if f, ok := m.ArgPos.Written(arg); ok && (arg == "x-message-ttl" || arg == "x-expires") {
		return fmt.Sprintf("write %s as a duration of at most ten years, such as 30d (3650d is the most)", f)
	}
	return v.QueueArgValueFix(typ, arg, val)
}
