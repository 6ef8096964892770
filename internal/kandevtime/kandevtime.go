// Package kandevtime parses the timestamp shapes kandev leaves in its
// databases and formats watchdogd's own.
//
// kandev's SQLite files hold TIMESTAMP columns as text in several shapes
// (mattn/go-sqlite3's "2006-01-02 15:04:05.999999999-07:00", SQL
// CURRENT_TIMESTAMP's "2006-01-02 15:04:05", RFC 3339 with "T" and "Z" or an
// offset). As text they do not sort chronologically against each other, so
// watchdogd parses every value and measures ages from instants. The parser is
// hand-written rather than a chain of time.Parse layouts because it runs for
// every timestamp of every scan and must accept exactly the shapes listed,
// whatever the fraction length.
package kandevtime

import (
	"time"
)

// MainLayout is kandev's usual shape, and the one watchdogd's test datasets
// write: microsecond precision, trailing zeros trimmed, explicit +00:00.
const MainLayout = "2006-01-02 15:04:05.999999-07:00"

// Parse reads one kandev timestamp. It accepts
//
//	YYYY-MM-DD[ T]HH:MM:SS[.fraction][zone]
//
// where the fraction has 1–9 digits and zone is absent (UTC), "Z", "z",
// "+HH:MM", "-HH:MM", "+HHMM" or "-HHMM", optionally preceded by one space.
// Anything else reports ok=false: the caller counts it and treats the value
// as missing.
func Parse(s string) (t time.Time, ok bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	sec, ok6 := digits(s[17:19])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return time.Time{}, false
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	rest := s[19:]
	nsec := 0
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		frac := rest[1:n]
		if len(frac) == 0 || len(frac) > 9 {
			return time.Time{}, false
		}
		v, _ := digits(frac)
		for i := len(frac); i < 9; i++ {
			v *= 10
		}
		nsec = v
		rest = rest[n:]
	}
	offset, ok := zone(rest)
	if !ok {
		return time.Time{}, false
	}
	t = time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC).Add(-time.Duration(offset) * time.Second)
	if y := t.Year(); y < 1 || y > 9999 {
		return time.Time{}, false // outside what four-digit text can hold
	}
	return t, true
}

// zone parses the trailing zone designator and returns its offset east of
// UTC in seconds.
func zone(z string) (int, bool) {
	if len(z) > 0 && z[0] == ' ' {
		z = z[1:]
		if z == "" {
			return 0, false
		}
	}
	switch {
	case z == "":
		return 0, true
	case z == "Z" || z == "z":
		return 0, true
	case z[0] != '+' && z[0] != '-':
		return 0, false
	}
	sign := 1
	if z[0] == '-' {
		sign = -1
	}
	var hh, mm string
	switch len(z) {
	case 6:
		if z[3] != ':' {
			return 0, false
		}
		hh, mm = z[1:3], z[4:6]
	case 5:
		hh, mm = z[1:3], z[3:5]
	case 3:
		hh, mm = z[1:3], "00"
	default:
		return 0, false
	}
	h, ok1 := digits(hh)
	m, ok2 := digits(mm)
	if !ok1 || !ok2 || h > 23 || m > 59 {
		return 0, false
	}
	return sign * (h*3600 + m*60), true
}

func digits(s string) (int, bool) {
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, len(s) > 0
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// Format writes t in kandev's main shape, in UTC, at microsecond precision.
func Format(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format(MainLayout)
}

// Canonical writes t as fixed-width UTC text whose byte order is
// chronological order (for years 0001–9999). The Go resolver compares these
// when it stands in for PostgreSQL, which orders by instant.
func Canonical(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05.000000000")
}

// RFC3339 is the report's time format: RFC 3339 UTC truncated to
// microseconds.
func RFC3339(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format("2006-01-02T15:04:05.999999Z07:00")
}
