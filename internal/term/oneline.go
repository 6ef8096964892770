package term

import "strings"

// OneLine flattens an error for a one-line report. pgx, for one, puts each
// address it tried on its own line after a "failed to connect to …:" head,
// and with sslmode=prefer tries each address twice with the same error: a
// head ending in ':' runs on into its first line, and a line repeating the
// one before it is dropped.
func OneLine(err error) string {
	var b strings.Builder
	prev := ""
	for _, l := range strings.FieldsFunc(err.Error(), func(r rune) bool { return r == '\n' || r == '\r' }) {
		l = strings.TrimSpace(l)
		if l == "" || l == prev {
			continue
		}
		switch {
		case b.Len() == 0:
		case strings.HasSuffix(prev, ":"):
			b.WriteByte(' ')
		default:
			b.WriteString("; ")
		}
		b.WriteString(l)
		prev = l
	}
	return b.String()
}
