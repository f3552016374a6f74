package payments

import (
	"strconv"
	"strings"
	"time"
)

// MaxAmountCents bounds an amount (10^13 cents), far from int64 overflow.
const MaxAmountCents = 10_000_000_000_000

// ParseAmount parses a positive decimal amount with at most two decimals
// ("12", "12.5", "12.50") into cents. It accepts ASCII digits and one dot
// only: no sign, exponent, spaces, thousands separators or currency.
func ParseAmount(s string) (int64, bool) {
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || len(whole) > 14 || (dot && (frac == "" || len(frac) > 2)) || !digits(whole) || !digits(frac) {
		return 0, false
	}
	for len(frac) < 2 {
		frac += "0"
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, false
	}
	f, _ := strconv.ParseInt(frac, 10, 64)
	c := w*100 + f
	if c <= 0 || c > MaxAmountCents {
		return 0, false
	}
	return c, true
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatCents formats cents as a decimal string with two decimals
// ("-12.50").
func FormatCents(c int64) string {
	sign := ""
	u := uint64(c)
	if c < 0 {
		sign, u = "-", uint64(-c)
	}
	return sign + strconv.FormatUint(u/100, 10) + "." + pad2(u%100)
}

func pad2(n uint64) string {
	if n < 10 {
		return "0" + strconv.FormatUint(n, 10)
	}
	return strconv.FormatUint(n, 10)
}

// parsePeriod parses a YYYY-MM month strictly.
func parsePeriod(s string) (time.Time, bool) {
	t, err := time.Parse(PeriodFormat, s)
	if err != nil || t.Format(PeriodFormat) != s {
		return time.Time{}, false
	}
	return t, true
}
