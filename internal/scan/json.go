package scan

import (
	"bufio"
	"bytes"
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

// writeList writes n items through one encoder and one buffer, reused
// from item to item: marshalling each into fresh slices (json.MarshalIndent)
// made as much garbage as the report itself, and the collector's headroom
// for it showed in the process's peak RSS.
func writeList(w *bufio.Writer, n int, item func(int) any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("    ", "  ")
	for i := 0; i < n; i++ {
		buf.Reset()
		if err := enc.Encode(item(i)); err != nil {
			return err
		}
		if i > 0 {
			_, _ = w.WriteString(",")
		}
		_, _ = w.WriteString("\n    ")
		_, _ = w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	if n > 0 {
		_, _ = w.WriteString("\n  ")
	}
	_, err := w.WriteString("]")
	return err
}
