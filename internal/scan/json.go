package scan

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// WriteJSON writes the report as indented JSON, one session and one finding
// at a time, so that a report of ten thousand sessions is never held twice
// in memory (once as values, once as text) before it is written.
func WriteJSON(w io.Writer, rep Report) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, "{\n  \"schema_version\": %d,\n  \"scanned_at\": %q,\n  \"sessions\": [", rep.SchemaVersion, rep.ScannedAt)
	if err := writeList(bw, len(rep.Sessions), func(i int) any { return rep.Sessions[i] }); err != nil {
		return err
	}
	fmt.Fprint(bw, ",\n  \"findings\": [")
	if err := writeList(bw, len(rep.Findings), func(i int) any { return rep.Findings[i] }); err != nil {
		return err
	}
	fmt.Fprint(bw, "\n}\n")
	return bw.Flush()
}

func writeList(w *bufio.Writer, n int, item func(int) any) error {
	for i := 0; i < n; i++ {
		b, err := json.MarshalIndent(item(i), "    ", "  ")
		if err != nil {
			return err
		}
		if i > 0 {
			_, _ = w.WriteString(",")
		}
		_, _ = w.WriteString("\n    ")
		_, _ = w.Write(b)
	}
	if n > 0 {
		_, _ = w.WriteString("\n  ")
	}
	_, err := w.WriteString("]")
	return err
}
