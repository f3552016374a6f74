package synth

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/site"
	"github.com/wildawm/wildawm/internal/validate"
)

// Table2 is the worlds' statistics, shaped like the paper's Table 2.
type Table2 struct {
	Personas         int     `json:"personas"`
	States           int     `json:"states"`
	FailedDays       int     `json:"failed_days"`
	MinStates        int     `json:"min_states_per_persona"`
	MaxStates        int     `json:"max_states_per_persona"`
	MeanStates       float64 `json:"mean_states_per_persona"`
	Sites            int     `json:"sites"`
	Services         int     `json:"services"`
	Definitions      int     `json:"definition_services"`
	Skills           int     `json:"skills"`
	SkillsUsed       int     `json:"skills_used"`
	Records          int64   `json:"db_records"`
	SitesPerDay      float64 `json:"sites_touched_per_day"`
	ServicesPerDay   float64 `json:"services_touched_per_day"`
	TablesPerDay     float64 `json:"tables_touched_per_day"`
	FilesPerDay      float64 `json:"files_touched_per_day"`
	FilesLastDay     float64 `json:"files_at_last_day"`
	GrowthPerDayKiB  float64 `json:"growth_per_day_kib"`
	StateMiB         float64 `json:"state_mib"`
	MedianTokens     int64   `json:"median_state_tokens"`
	StoreMiB         float64 `json:"store_mib"`
	UniqueContentMiB float64 `json:"unique_content_mib"`
	StoreRatio       float64 `json:"store_over_unique"`
	SumStateMiB      float64 `json:"sum_of_states_mib"`
}

// Stats computes Table 2 over the run's done days.
func (r *Run) Stats() (*Table2, error) {
	ps, err := r.LoadPersonas()
	if err != nil {
		return nil, err
	}
	t := &Table2{Skills: len(r.Planner().Skills.Names())}
	siteNames, serviceNames := map[string]bool{}, map[string]bool{}
	for _, s := range site.All() {
		siteNames[s.Name] = true
	}
	for _, s := range service.All() {
		serviceNames[s.Name] = true
	}
	usedSites, usedServices, usedDefs, usedSkills := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	var tokens []int64
	var days, sitesT, servicesT, tablesT, filesT int
	var filesLast, growth, stateBytes float64
	var grown int
	for _, p := range ps {
		var first, last *Done
		n := 0
		for day := 0; ; day++ {
			ddir := r.DayDir(p.ID, day)
			if _, err := os.Stat(ddir); err != nil {
				break
			}
			var done Done
			if err := readJSON(filepath.Join(ddir, "done.json"), &done); err != nil {
				// Not done: failed every revision, or not checked yet.
				var reports []validate.Report
				if readJSON(filepath.Join(ddir, "report.json"), &reports) == nil && len(reports) > MaxRevisions && !reports[len(reports)-1].OK {
					t.FailedDays++
				}
				break
			}
			n++
			if first == nil {
				first = &done
			}
			last = &done
			if done.Stats != nil {
				tokens = append(tokens, done.Stats.Tokens)
				stateBytes += float64(done.Stats.DBBytes + done.Stats.FileBytes)
			}
			d, err := readDelta(ddir)
			if err != nil {
				return nil, err
			}
			s, sv, tb, fl := touched(d, siteNames, serviceNames)
			for k := range s {
				usedSites[k] = true
			}
			for k := range sv {
				if serviceNames[k] {
					usedServices[k] = true
				} else {
					usedDefs[k] = true
				}
			}
			sitesT, servicesT, tablesT, filesT = sitesT+len(s), servicesT+len(sv), tablesT+len(tb), filesT+len(fl)
			days++
			plan := &Day{}
			if readJSON(filepath.Join(ddir, "plan.json"), plan) == nil {
				for _, ev := range plan.Events {
					usedSkills[ev.Skill] = true
				}
			}
		}
		if n == 0 {
			continue
		}
		t.Personas++
		t.States += n
		if t.MinStates == 0 || n < t.MinStates {
			t.MinStates = n
		}
		t.MaxStates = max(t.MaxStates, n)
		if last.Stats != nil {
			t.Records += last.Stats.Rows
			filesLast += float64(last.Stats.Files)
			if n > 1 && first.Stats != nil {
				growth += float64((last.Stats.DBBytes+last.Stats.FileBytes)-(first.Stats.DBBytes+first.Stats.FileBytes)) / float64(n-1)
				grown++
			}
		}
	}
	if t.Personas == 0 {
		return nil, fmt.Errorf("no done days in %s: run wildawm syn worlds first", r.Dir)
	}
	t.MeanStates = float64(t.States) / float64(t.Personas)
	t.Sites, t.Services, t.Definitions, t.SkillsUsed = len(usedSites), len(usedServices), len(usedDefs), len(usedSkills)
	t.SitesPerDay, t.ServicesPerDay = float64(sitesT)/float64(days), float64(servicesT)/float64(days)
	t.TablesPerDay, t.FilesPerDay = float64(tablesT)/float64(days), float64(filesT)/float64(days)
	t.FilesLastDay = filesLast / float64(t.Personas)
	if grown > 0 {
		t.GrowthPerDayKiB = growth / float64(grown) / 1024
	}
	t.StateMiB = stateBytes / float64(t.States) / (1 << 20)
	t.SumStateMiB = stateBytes / (1 << 20)
	slices.Sort(tokens)
	if len(tokens) > 0 {
		t.MedianTokens = tokens[len(tokens)/2]
	}
	st, err := r.Store.Stats()
	if err != nil {
		return nil, err
	}
	t.StoreMiB = float64(st.Bytes) / (1 << 20)
	t.UniqueContentMiB = float64(st.BlobBytes-st.TreeBytes) / (1 << 20)
	if t.UniqueContentMiB > 0 {
		t.StoreRatio = t.StoreMiB / t.UniqueContentMiB
	}
	return t, nil
}

// touched returns the sites, services, tables (db.table) and files a
// day's delta writes.
func touched(d *delta.Delta, sites, services map[string]bool) (s, sv, tables, files map[string]bool) {
	s, sv, tables, files = map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, o := range d.Ops {
		switch {
		case o.DB != "":
			if sites[o.DB] {
				s[o.DB] = true
			} else {
				sv[o.DB] = true
			}
			if o.Table != "" {
				tables[o.DB+"."+o.Table] = true
			}
		case o.Site != "":
			s[o.Site] = true // an account on the site
		case o.Path != "":
			files[o.Path] = true
		case o.To != "":
			files[o.To] = true
		}
	}
	return
}

// Markdown renders the table with the paper's figures beside it.
func (t *Table2) Markdown() string {
	var b strings.Builder
	b.WriteString("| statistic | this run | paper (Table 2) |\n|---|---:|---:|\n")
	row := func(name, ours, paper string) { fmt.Fprintf(&b, "| %s | %s | %s |\n", name, ours, paper) }
	row("personas", fmt.Sprint(t.Personas), "36")
	row("world states", fmt.Sprint(t.States), "640")
	row("states per persona (min-max, mean)", fmt.Sprintf("%d-%d, %.1f", t.MinStates, t.MaxStates, t.MeanStates), "8-30, 17.8")
	row("days that failed every revision", fmt.Sprint(t.FailedDays), "-")
	row("sites / MCP services used", fmt.Sprintf("%d / %d (+%d from definitions)", t.Sites, t.Services, t.Definitions), "15 / 8")
	row("skills (used)", fmt.Sprintf("%d (%d)", t.Skills, t.SkillsUsed), "83")
	row("DB records (last states, all personas)", fmt.Sprintf("%.1fK", float64(t.Records)/1000), "171.6K")
	row("sites touched per day", fmt.Sprintf("%.2f", t.SitesPerDay), "3.97")
	row("MCP services touched per day", fmt.Sprintf("%.2f", t.ServicesPerDay), "5.31")
	row("tables touched per day", fmt.Sprintf("%.2f", t.TablesPerDay), "15.38")
	row("files touched per day", fmt.Sprintf("%.2f", t.FilesPerDay), "4.97")
	row("local files at the last day", fmt.Sprintf("%.1f", t.FilesLastDay), "50.1")
	row("world growth per day", fmt.Sprintf("%.1f KiB", t.GrowthPerDayKiB), "30.9 KiB")
	row("world state size (mean)", fmt.Sprintf("%.2f MiB", t.StateMiB), "59.3 MiB")
	row("median world state (tokens, text bytes / 4)", fmt.Sprintf("%.1fK", float64(t.MedianTokens)/1000), "52.4K")
	row("store on disk / unique content", fmt.Sprintf("%.1f MiB / %.1f MiB = %.2fx (states summed: %.0f MiB)", t.StoreMiB, t.UniqueContentMiB, t.StoreRatio, t.SumStateMiB), "-")
	return b.String()
}
