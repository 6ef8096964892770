package authority

import "strings"

// PostgreSQL numeric limits (src/include/utils/numeric.h): display scale and
// base-10000 weight. A JSON number outside them fails the ::jsonb cast with
// SQLSTATE 22003, so in PostgreSQL mode it makes the metadata malformed.
const (
	pgMaxDscale = 0x3FFF
	pgMaxWeight = 32767
)

// decimalParts splits a JSON number token into its significant digits (no
// leading or trailing zeros), the decimal weight of the first of them
// (10^weight), and the display scale PostgreSQL's numeric input gives it.
func decimalParts(tok string) (digits string, weight int, dscale int, ok bool) {
	tok = strings.TrimPrefix(tok, "-")
	mant, exp := tok, 0
	if i := strings.IndexAny(tok, "eE"); i >= 0 {
		mant = tok[:i]
		e := tok[i+1:]
		neg := false
		if e != "" && (e[0] == '+' || e[0] == '-') {
			neg = e[0] == '-'
			e = e[1:]
		}
		for _, c := range []byte(e) {
			exp = exp*10 + int(c-'0')
			if exp > 1<<30 {
				return "", 0, 0, false // PostgreSQL: exponent out of range
			}
		}
		if neg {
			exp = -exp
		}
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	dscale = len(frac) - exp
	if dscale < 0 {
		dscale = 0
	}
	all := intPart + frac
	lead := len(all) - len(strings.TrimLeft(all, "0"))
	digits = strings.TrimRight(all[lead:], "0")
	weight = len(intPart) - 1 - lead + exp
	return digits, weight, dscale, true
}

// pgNumericInRange reports whether PostgreSQL's numeric input accepts tok.
func pgNumericInRange(tok string) bool {
	digits, dweight, dscale, ok := decimalParts(tok)
	if !ok || dscale > pgMaxDscale {
		return false
	}
	if digits == "" {
		return true // zero
	}
	var w int
	if dweight >= 0 {
		w = (dweight+4)/4 - 1
	} else {
		w = -((-dweight-1)/4 + 1)
	}
	return w <= pgMaxWeight
}

// pgNumericIsOne reports whether jsonb prints tok as exactly "1": the value
// is one and its display scale is zero (1e0 and 0.1e1 are, 1.0 is not).
func pgNumericIsOne(tok string) bool {
	if strings.HasPrefix(tok, "-") {
		return false
	}
	digits, weight, dscale, ok := decimalParts(tok)
	return ok && digits == "1" && weight == 0 && dscale == 0
}
