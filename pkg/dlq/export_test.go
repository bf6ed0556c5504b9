package dlq

// SetAfterConfirm installs a hook called once a republish is confirmed and
// before its dead letter is acked: the worst moment for a crash.
func SetAfterConfirm(o *ReplayOptions, f func(index int)) { o.afterConfirm = f }
