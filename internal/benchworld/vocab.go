package benchworld

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

var words = strings.Fields(`rack surge protector cable audio video mixer stage light speaker
amplifier console invoice order shipment return warranty approval budget venue client schedule
install assistant inventory spec sheet display panel white black outlet joule rating clamp
voltage meeting reminder deadline project draft review update quote estimate payment transfer
statement balance ticket status resolved pending shipped delivered recipe dinner flight hotel
booking course lecture assignment paper preprint model dataset repository issue commit branch
news article match score team league map route place coffee library dictionary definition
search query result answer equation chart photo album family weekend travel train airport gate
seat window aisle morning evening tomorrow today monday friday please thanks confirm check
send receive attach file folder note task done todo priority high low medium contact phone
email address city street north south east west green blue red silver grey compact portable
wireless battery charger adapter converter bracket mount screw tool kit case bag strap`)

var firstNames = strings.Fields(`Maya Jonas Priya Diego Lena Omar Sofia Kenji Amara Lucas Chen
Fatima Noah Elena Ravi Hana Marco Zoe Tariq Ines Felix Aiko Samuel Nadia`)

var lastNames = strings.Fields(`Rivera Okafor Lindqvist Tanaka Moreau Haddad Kowalski Santos
Nguyen Brennan Varga Osei Petrov Alvarez Schmidt Mehta Costa Yilmaz`)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func sentence(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(pick(r, words))
	}
	return b.String()
}

func person(r *rand.Rand) string { return pick(r, firstNames) + " " + pick(r, lastNames) }

// stamp is a frozen timestamp on day d (day 0 = 2026-03-01) at a minute of
// the day.
func stamp(day, minute int) string {
	return fmt.Sprintf("2026-%02d-%02d %02d:%02d:00", 3+(day/31), 1+day%31, (minute/60)%24, minute%60)
}

// clock is the RFC 3339 end of day d.
func clock(day int) string {
	return fmt.Sprintf("2026-%02d-%02dT23:00:00Z", 3+(day/31), 1+day%31)
}
