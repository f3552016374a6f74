package calc

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Result is an answer and how the question was read.
type Result struct {
	As     string // the question as understood, e.g. "12.5 km in mi"
	Answer string // e.g. "7.767 mi"
}

// unit is one unit of a dimension: value in base units = (x + offset) * factor.
type unit struct {
	dim            string
	factor, offset float64
	name           string
}

var units = map[string]unit{
	"mm": {"length", 0.001, 0, "mm"}, "cm": {"length", 0.01, 0, "cm"}, "m": {"length", 1, 0, "m"}, "km": {"length", 1000, 0, "km"},
	"in": {"length", 0.0254, 0, "in"}, "ft": {"length", 0.3048, 0, "ft"}, "yd": {"length", 0.9144, 0, "yd"}, "mi": {"length", 1609.344, 0, "mi"},
	"g": {"mass", 0.001, 0, "g"}, "kg": {"mass", 1, 0, "kg"}, "lb": {"mass", 0.45359237, 0, "lb"}, "oz": {"mass", 0.028349523125, 0, "oz"},
	"ml": {"volume", 0.001, 0, "ml"}, "l": {"volume", 1, 0, "l"}, "cup": {"volume", 0.2365882365, 0, "cup"}, "gal": {"volume", 3.785411784, 0, "gal"},
	"c": {"temperature", 1, 273.15, "°C"}, "k": {"temperature", 1, 0, "K"}, "f": {"temperature", 5.0 / 9, 459.67, "°F"},
	"s": {"time", 1, 0, "s"}, "min": {"time", 60, 0, "min"}, "h": {"time", 3600, 0, "h"}, "day": {"time", 86400, 0, "days"}, "week": {"time", 604800, 0, "weeks"},
}

var aliases = map[string]string{"meter": "m", "meters": "m", "metre": "m", "metres": "m", "kilometers": "km", "kilometres": "km", "miles": "mi", "mile": "mi",
	"feet": "ft", "foot": "ft", "inch": "in", "inches": "in", "yards": "yd", "grams": "g", "kilograms": "kg", "pounds": "lb", "pound": "lb", "lbs": "lb",
	"ounces": "oz", "liters": "l", "litres": "l", "cups": "cup", "gallons": "gal", "celsius": "c", "°c": "c", "fahrenheit": "f", "°f": "f", "kelvin": "k",
	"seconds": "s", "sec": "s", "minutes": "min", "hours": "h", "hour": "h", "days": "day", "weeks": "week"}

func unitOf(s string) (unit, bool) {
	s = strings.ToLower(s)
	if a, ok := aliases[s]; ok {
		s = a
	}
	u, ok := units[s]
	return u, ok
}

var (
	convRE    = regexp.MustCompile(`^(?i)(.+?)\s*([a-z°]+)\s+(?:in|to|as)\s+([a-z°]+)$`)
	betweenRE = regexp.MustCompile(`^(?i)days\s+between\s+(\d{4}-\d{2}-\d{2})\s+and\s+(\d{4}-\d{2}-\d{2})$`)
	plusRE    = regexp.MustCompile(`^(?i)(\d{4}-\d{2}-\d{2})\s+(plus|minus|\+|-)\s+(\d{1,5})\s+(days?|weeks?)$`)
	weekdayRE = regexp.MustCompile(`^(?i)weekday\s+of\s+(\d{4}-\d{2}-\d{2})$`)
)

func day(s string) (time.Time, error) {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return t, fmt.Errorf("%q is not a date; write YYYY-MM-DD", s)
	}
	return t, nil
}

// Eval answers one line: a date question, a unit conversion, or an
// arithmetic expression (+ - * / ^ %, parentheses, sqrt and abs).
func Eval(q string) (Result, error) {
	q = strings.TrimSpace(q)
	if m := betweenRE.FindStringSubmatch(q); m != nil {
		a, err := day(m[1])
		if err != nil {
			return Result{}, err
		}
		b, err := day(m[2])
		if err != nil {
			return Result{}, err
		}
		n := int(b.Sub(a).Hours() / 24)
		return Result{As: "days from " + m[1] + " to " + m[2], Answer: fmt.Sprintf("%d days", n)}, nil
	}
	if m := plusRE.FindStringSubmatch(q); m != nil {
		t, err := day(m[1])
		if err != nil {
			return Result{}, err
		}
		n, _ := strconv.Atoi(m[3])
		if strings.HasPrefix(strings.ToLower(m[4]), "week") {
			n *= 7
		}
		if m[2] == "minus" || m[2] == "-" {
			n = -n
		}
		r := t.AddDate(0, 0, n)
		return Result{As: fmt.Sprintf("%s %+d days", m[1], n), Answer: r.Format("2006-01-02") + " (" + r.Weekday().String() + ")"}, nil
	}
	if m := weekdayRE.FindStringSubmatch(q); m != nil {
		t, err := day(m[1])
		if err != nil {
			return Result{}, err
		}
		return Result{As: "the weekday of " + m[1], Answer: t.Weekday().String()}, nil
	}
	if m := convRE.FindStringSubmatch(q); m != nil {
		from, ok1 := unitOf(m[2])
		to, ok2 := unitOf(m[3])
		if ok1 && ok2 {
			if from.dim != to.dim {
				return Result{}, fmt.Errorf("cannot convert %s (%s) to %s (%s)", from.name, from.dim, to.name, to.dim)
			}
			x, err := arith(m[1])
			if err != nil {
				return Result{}, err
			}
			v := ((x+from.offset)*from.factor)/to.factor - to.offset
			return Result{As: num(x) + " " + from.name + " in " + to.name, Answer: num(v) + " " + to.name}, nil
		}
	}
	x, err := arith(q)
	if err != nil {
		return Result{}, err
	}
	return Result{As: q, Answer: num(x)}, nil
}

// num writes x with at most six decimals and no trailing zeros.
func num(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	s := strconv.FormatFloat(x, 'f', 6, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// arith evaluates an arithmetic expression.
func arith(s string) (float64, error) {
	p := &parser{s: strings.ReplaceAll(s, " ", "")}
	if p.s == "" {
		return 0, fmt.Errorf("nothing to calculate")
	}
	v, err := p.expr()
	if err != nil {
		return 0, err
	}
	if p.i < len(p.s) {
		return 0, fmt.Errorf("cannot read %q at %q: use numbers, + - * / ^ %%, parentheses, sqrt( ) and abs( ), or a unit or date question", s, p.s[p.i:])
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q has no finite result (a division by zero?)", s)
	}
	return v, nil
}

type parser struct {
	s     string
	i     int
	depth int
}

func (p *parser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *parser) expr() (float64, error) {
	v, err := p.term()
	for err == nil && (p.peek() == '+' || p.peek() == '-') {
		op := p.peek()
		p.i++
		var r float64
		if r, err = p.term(); err == nil {
			if op == '+' {
				v += r
			} else {
				v -= r
			}
		}
	}
	return v, err
}

func (p *parser) term() (float64, error) {
	v, err := p.power()
	for err == nil && (p.peek() == '*' || p.peek() == '/' || p.peek() == '%') {
		op := p.peek()
		p.i++
		var r float64
		if r, err = p.power(); err == nil {
			switch op {
			case '*':
				v *= r
			case '/':
				v /= r
			default:
				v = math.Mod(v, r)
			}
		}
	}
	return v, err
}

func (p *parser) power() (float64, error) {
	v, err := p.unary()
	if err == nil && p.peek() == '^' {
		p.i++
		var r float64
		if r, err = p.power(); err == nil { // right-associative
			v = math.Pow(v, r)
		}
	}
	return v, err
}

func (p *parser) unary() (float64, error) {
	if p.peek() == '-' {
		p.i++
		v, err := p.unary()
		return -v, err
	}
	return p.primary()
}

func (p *parser) primary() (float64, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 50 {
		return 0, fmt.Errorf("the expression is nested too deeply")
	}
	for _, fn := range []string{"sqrt(", "abs("} {
		if strings.HasPrefix(p.s[p.i:], fn) {
			p.i += len(fn) - 1
			v, err := p.primary()
			if err != nil {
				return 0, err
			}
			if fn == "sqrt(" {
				return math.Sqrt(v), nil
			}
			return math.Abs(v), nil
		}
	}
	if p.peek() == '(' {
		p.i++
		v, err := p.expr()
		if err != nil {
			return 0, err
		}
		if p.peek() != ')' {
			return 0, fmt.Errorf("a parenthesis is not closed")
		}
		p.i++
		return v, nil
	}
	j := p.i
	for j < len(p.s) && (p.s[j] >= '0' && p.s[j] <= '9' || p.s[j] == '.' || p.s[j] == ',') {
		j++
	}
	if j == p.i {
		if p.i >= len(p.s) {
			return 0, fmt.Errorf("the expression ends too early")
		}
		return 0, fmt.Errorf("cannot read %q: use numbers, + - * / ^ %%, parentheses, sqrt( ) and abs( ), or a unit or date question", p.s[p.i:])
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(p.s[p.i:j], ",", ""), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", p.s[p.i:j])
	}
	p.i = j
	return v, nil
}
