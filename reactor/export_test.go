package reactor

// PeekIdleAfter is peekIdleAfter, for tests that must let a server session
// become idle long enough to be peeked at.
const PeekIdleAfter = peekIdleAfter
