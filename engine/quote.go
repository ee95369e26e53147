package engine

// quoteTruncated quotes a client-chosen name for an error message, cut at 64
// bytes on a rune boundary so a hostile id cannot flood the message.
func quoteTruncated(s string) string {
	const max = 64
	if len(s) > max {
		n := max
		for i := 0; i < 3 && n > 0 && s[n]&0xC0 == 0x80; i++ {
			n--
		}
		s = s[:n] + "…"
	}
	return `"` + s + `"`
}
