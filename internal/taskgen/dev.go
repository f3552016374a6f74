package taskgen

// devFamilies are the task families of this file: errands over the code,
// calc and search websites with the tasks and notes services
// (dev_stars.go, dev_calc.go, dev_search.go).
func devFamilies() []Family {
	return []Family{starredIssues{}, keptCalcs{}, broadSearch{}}
}
