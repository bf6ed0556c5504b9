package apply

// LateAfter is lateAfter, for the tests.
const LateAfter = lateAfter
