package taskgen

// workFamilies are the task families of this file: errands of study,
// reading and work over the courses, archive, models and shop websites
// with the tasks, messages, mail, contacts and support services
// (work_courses.go, work_reading.go, work_models.go, work_returns.go).
func workFamilies() []Family {
	return []Family{courseDeadlines{}, readingQueue{}, modelPick{}, returnWindow{}}
}
